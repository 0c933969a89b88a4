"""corpus.services: create, unchanged re-ingest, changed re-ingest, delete, collections."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from corpus import services
from corpus.models import Chunk, Collection, Document
from tests.corpus.ingest_helpers import GUIDE_V1, GUIDE_V2, assert_chunks_tile, eager_media  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_media")]


@pytest.fixture
def collection():
    return Collection.objects.create(slug="garden", name="Garden", chunk_size=32, chunk_overlap=0)


def ingest(collection, data, *, capture, source="guide.md"):
    with capture(execute=True) as callbacks:
        document = services.document_ingest(collection=collection, source=source, data=data, filename=source)
    document.refresh_from_db()
    return document, callbacks


def test_ingest_builds_chunks_that_tile_the_text(collection, django_capture_on_commit_callbacks):
    document, callbacks = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)

    assert len(callbacks) == 1  # one processing task, enqueued on commit
    assert document.status == Document.Status.READY, document.error
    assert document.title == "Garden guide"
    assert document.content_hash == hashlib.sha256(GUIDE_V1).hexdigest() == document.built_hash
    assert document.built_signature == collection.pipeline_signature()
    assert Path(document.file.path).read_bytes() == GUIDE_V1
    assert "Aphids gather under the leaves" in document.text
    chunks = assert_chunks_tile(document)
    assert len(chunks) >= 3
    pests = next(c for c in chunks if "Aphids" in c.text)
    assert pests.heading_path == "Garden guide > Pests"
    assert pests.context == "Garden guide > Pests"  # the header lives beside the text...
    assert "Garden guide > Pests" not in pests.text  # ...never inside it
    assert pests.page is None


def test_unchanged_reingest_is_a_no_op(collection, django_capture_on_commit_callbacks):
    first, _ = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)
    chunk_ids = list(Chunk.objects.filter(document=first).values_list("pk", flat=True))

    again, callbacks = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)

    assert again.pk == first.pk
    assert callbacks == []  # nothing enqueued
    assert list(Chunk.objects.filter(document=again).values_list("pk", flat=True)) == chunk_ids
    assert again.ingested_at == first.ingested_at
    assert Document.objects.count() == 1


def test_changed_reingest_replaces_the_chunks(collection, django_capture_on_commit_callbacks):
    first, _ = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)
    old_ids = set(Chunk.objects.filter(document=first).values_list("pk", flat=True))
    old_path = Path(first.file.path)

    second, _ = ingest(collection, GUIDE_V2, capture=django_capture_on_commit_callbacks)

    assert second.pk == first.pk and second.status == Document.Status.READY
    assert second.built_hash == hashlib.sha256(GUIDE_V2).hexdigest()
    chunks = assert_chunks_tile(second)
    assert not old_ids & {c.pk for c in chunks}
    assert any("Peppers" in c.text for c in chunks)
    assert not Chunk.objects.filter(text__contains="Aphids").exists()
    assert not old_path.exists() and Path(second.file.path).read_bytes() == GUIDE_V2


def test_delete_removes_chunks_and_the_stored_file(collection, django_capture_on_commit_callbacks):
    document, _ = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)
    path = Path(document.file.path)
    assert path.exists() and Chunk.objects.filter(document=document).exists()

    with django_capture_on_commit_callbacks(execute=True):
        services.document_delete(document=document)

    assert not Document.objects.filter(pk=document.pk).exists()
    assert not Chunk.objects.filter(document_id=document.pk).exists()
    assert not path.exists()


def test_settings_change_makes_reingest_rebuild(collection, django_capture_on_commit_callbacks):
    document, _ = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)
    small = Chunk.objects.filter(document=document).count()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        services.document_reingest(document=document)
    assert callbacks == []  # up to date: nothing to do

    collection.chunk_size = 256
    collection.save()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        services.document_reingest(document=document)
    document.refresh_from_db()

    assert len(callbacks) == 1
    assert document.built_signature == collection.pipeline_signature()
    assert len(assert_chunks_tile(document)) < small


def test_forced_reingest_rebuilds_unchanged_content(collection, django_capture_on_commit_callbacks):
    document, _ = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)
    old_ids = set(Chunk.objects.filter(document=document).values_list("pk", flat=True))

    with django_capture_on_commit_callbacks(execute=True):
        services.document_reingest(document=document, force=True)
    document.refresh_from_db()

    assert document.status == Document.Status.READY
    assert not old_ids & set(Chunk.objects.filter(document=document).values_list("pk", flat=True))
    assert_chunks_tile(document)


def test_oversized_file_fails_without_being_stored(collection, settings, django_capture_on_commit_callbacks):
    settings.MAX_UPLOAD_BYTES = 100
    document, callbacks = ingest(collection, b"x" * 101, capture=django_capture_on_commit_callbacks,
                                 source="big.txt")

    assert document.status == Document.Status.FAILED
    assert document.error.startswith("The file is ") and "the limit is" in document.error
    assert not document.file and callbacks == []
    assert not Chunk.objects.filter(document=document).exists()


def test_collection_get_or_create_is_idempotent_and_checks_the_slug(user):
    created = services.collection_get_or_create(slug="team-notes", owner=user)
    again = services.collection_get_or_create(slug="team-notes", name="Other name")

    assert again.pk == created.pk and again.name == "Team notes" and again.owner == user
    with pytest.raises(ValidationError):
        services.collection_get_or_create(slug="not a slug!")
