"""A re-embed delivered twice does its work once (the broker hands an unacknowledged task to a
second worker after its visibility timeout): a second run while the first holds the collection
does nothing, one after it finds nothing to do; the task runs in slices shorter than that timeout;
a database blip goes to Celery's retry instead of failing the re-embed; progress counts rows written."""

from __future__ import annotations

import threading

import pytest
from celery.exceptions import Retry
from django.db import OperationalError, connection

from corpus import tasks
from corpus.ingest import embed
from corpus.models import Chunk, ChunkVector, Collection, ReembedStatus
from corpus.reembed import services as reembed
from corpus.reembed import store
from tests.corpus.ingest_helpers import GUIDE_V1, GUIDE_V2, eager_media, ingest  # noqa: F401
from tests.corpus.reembed.test_reembed import NEW_MODEL, NOTES, OLD_MODEL, new_model  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("eager_media", "new_model")]


@pytest.fixture
def garden(django_capture_on_commit_callbacks) -> Collection:
    collection = Collection.objects.create(slug="garden", name="Garden", chunk_size=32, chunk_overlap=0,
                                           embedding_mode=Collection.EmbeddingMode.PLAIN, embedding_model=OLD_MODEL)
    for source, data in (("guide.md", GUIDE_V1), ("peppers.md", GUIDE_V2), ("shed.md", NOTES)):
        ingest(collection, source, data, django_capture_on_commit_callbacks)
    return collection


@pytest.fixture
def embedded(monkeypatch) -> list[int]:
    """The number of texts embedded with the new model per call (the dimension probe left out)."""
    calls: list[int] = []
    real = embed.embed_texts

    def counting(texts, **kwargs):
        if kwargs.get("model") == NEW_MODEL and texts != ["dimension probe"]:
            calls.append(len(texts))
        return real(texts, **kwargs)

    monkeypatch.setattr(embed, "embed_texts", counting)
    return calls


def test_a_second_delivery_while_the_first_runs_and_one_after_it_do_the_work_once(garden, embedded,
                                                                                  monkeypatch):
    total = Chunk.objects.filter(document__collection=garden).count()
    reembed.reembed_start(collection=garden)
    inside, release = threading.Event(), threading.Event()
    real_write = store.write

    def held_write(model, chunk_ids, vectors):
        inside.set()
        assert release.wait(60)
        return real_write(model, chunk_ids, vectors)

    monkeypatch.setattr(store, "write", held_write)
    outcome = {}

    def first_delivery():
        try:
            outcome["first"] = tasks.reembed_collection_task(garden.pk)
        finally:
            connection.close()

    first = threading.Thread(target=first_delivery)
    first.start()
    try:
        assert inside.wait(60)
        # The same message handed to a second worker while the first runs: it does nothing now and
        # asks Celery to look again later (the first might die).
        assert reembed.reembed_run(garden.pk) == "busy"
        with pytest.raises(Retry):
            tasks.reembed_collection_task(garden.pk)
    finally:
        release.set()
        first.join(60)
    assert outcome["first"] == "done"
    assert tasks.reembed_collection_task(garden.pk) == "idle"  # delivered once more after it: nothing to do

    assert sum(embedded) == total  # every chunk embedded once
    garden.refresh_from_db()
    assert garden.embedding_model == NEW_MODEL and garden.reembed_status == ReembedStatus.DONE
    assert garden.reembed_done == garden.reembed_total == total
    assert ChunkVector.objects.filter(model=NEW_MODEL).count() == total


def test_the_task_runs_in_slices_each_queueing_the_next(garden, embedded, monkeypatch, settings):
    total = Chunk.objects.filter(document__collection=garden).count()
    documents = garden.documents.count()
    reembed.reembed_start(collection=garden)
    monkeypatch.setattr(tasks, "REEMBED_SLICE_SECONDS", 0.0)  # one batch (one document here) a slice
    runs = []
    real_run = tasks.reembed_run

    def counted(collection_id, **kwargs):
        runs.append(kwargs["seconds"])
        return real_run(collection_id, **kwargs)

    monkeypatch.setattr(tasks, "reembed_run", counted)
    assert tasks.reembed_collection_task.delay(garden.pk).get() == "more"  # eager: the next slices ran too
    assert len(runs) == documents and runs == [0.0] * documents
    garden.refresh_from_db()
    assert garden.embedding_model == NEW_MODEL and garden.reembed_done == total and sum(embedded) == total
    settings.CELERY_VISIBILITY_TIMEOUT = 30
    monkeypatch.setattr(tasks, "REEMBED_SLICE_SECONDS", 60.0)
    assert tasks.reembed_slice_seconds() == 10.0  # a third of the timeout


def test_a_database_blip_goes_to_the_retry_and_the_retry_finishes_the_work(garden, embedded, monkeypatch):
    total = Chunk.objects.filter(document__collection=garden).count()
    reembed.reembed_start(collection=garden)
    real_write = store.write
    calls = []

    def blip_on_the_second_batch(model, chunk_ids, vectors):
        calls.append(len(chunk_ids))
        if len(calls) == 2:
            raise OperationalError("server closed the connection unexpectedly")
        return real_write(model, chunk_ids, vectors)

    monkeypatch.setattr(store, "write", blip_on_the_second_batch)
    with pytest.raises(OperationalError):
        reembed.reembed_run(garden.pk)
    garden.refresh_from_db()
    assert garden.reembed_status == ReembedStatus.RUNNING and garden.reembed_error == ""  # not failed
    assert tasks.reembed_collection_task.autoretry_for == tasks.pipeline.TRANSIENT_ERRORS

    assert reembed.reembed_run(garden.pk) == "done"  # the retry
    garden.refresh_from_db()
    assert garden.embedding_model == NEW_MODEL and garden.reembed_done == total
    assert ChunkVector.objects.filter(model=NEW_MODEL).count() == total


def test_write_counts_the_rows_it_wrote_not_those_it_was_given(garden, settings):
    chunks = list(Chunk.objects.filter(document__collection=garden).order_by("pk").values_list("pk", "text"))
    ids = [pk for pk, _ in chunks]
    vectors = embed.embed_texts([text for _, text in chunks], model=NEW_MODEL)
    assert store.write(NEW_MODEL, ids[:2], vectors[:2]) == 2
    assert store.write(NEW_MODEL, ids, vectors) == len(ids) - 2  # the first two were there already
    assert store.write(NEW_MODEL, ids, vectors) == 0
    Chunk.objects.filter(pk__in=ids[:3]).update(embedding=None)  # the column model: only the empty ones
    column = embed.embed_texts([text for _, text in chunks[:4]], model=OLD_MODEL)
    assert store.write(OLD_MODEL, ids[:4], column) == 3
    assert Chunk.objects.filter(pk__in=ids, embedding__isnull=True).count() == 0
