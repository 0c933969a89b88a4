"""corpus.locks' LOCK ORDER (a collection's row before its documents'): publishing a document while
its collection's settings change no longer deadlocks. Two real transactions on two connections:
collection_update holds the collection and is about to re-queue the document while the pipeline
publishes that document. Publishing used to lock the document first, then the collection: Postgres
then found a deadlock and failed one of the two."""

from __future__ import annotations

import threading
from unittest import mock

import pytest
from django.db import connection

from corpus import services
from corpus.ingest import pipeline
from corpus.models import Collection, Document
from tests.api.test_concurrent_writes import waiting_on_a_lock
from tests.corpus.ingest_helpers import GUIDE_V1

pytestmark = pytest.mark.django_db(transaction=True)


def _in_thread(target, outcome: dict, name: str) -> threading.Thread:
    def run() -> None:
        try:
            outcome[name] = target()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            outcome[name] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_publishing_beside_a_collection_update_does_not_deadlock(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    collection = Collection.objects.create(slug="garden", name="Garden")
    with mock.patch.object(services, "process_document_task"):
        document = services.document_ingest(collection=collection, source="guide.md", data=GUIDE_V1,
                                            filename="guide.md")
        holding, go = threading.Event(), threading.Event()
        reingest = services.document_reingest

        def reingest_later(**kwargs):
            holding.set()  # the collection's row is locked FOR UPDATE now
            assert go.wait(60)
            return reingest(**kwargs)

        outcome: dict = {}
        with mock.patch.object(services, "document_reingest", reingest_later):
            update = _in_thread(lambda: services.collection_update(collection=collection, chunk_size=150),
                                outcome, "update")
            assert holding.wait(30)
            publish = _in_thread(lambda: pipeline.process_document(document.pk), outcome, "publish")
            assert waiting_on_a_lock(timeout=120)  # the publish waits for the collection
            go.set()
            update.join(60)
            publish.join(60)
    assert not isinstance(outcome["update"], BaseException), outcome["update"]
    assert outcome["publish"] == "ready", outcome["publish"]
    document.refresh_from_db()
    assert Collection.objects.get(pk=collection.pk).chunk_size == 150
    assert document.status == Document.Status.READY and not document.is_current()  # built before the change
