"""corpus.services: create, unchanged re-ingest, changed re-ingest, delete, collections."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from corpus import services, sharing, uploads
from corpus.models import Chunk, Collection, Document
from tests.corpus.ingest_helpers import GUIDE_V1, GUIDE_V2, assert_chunks_tile, eager_media, enqueued_builds  # noqa: F401

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

    assert enqueued_builds(callbacks) == 1  # one processing task, enqueued on commit
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

    assert enqueued_builds(callbacks) == 1
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
    assert document.error == uploads.upload_error("big.txt", 101)
    assert document.error == "big.txt: the file is 101 bytes; the limit is 100 bytes."
    assert not document.file and callbacks == []
    assert not Chunk.objects.filter(document=document).exists()


def test_collection_get_or_create_is_idempotent_and_checks_the_slug(user):
    created = services.collection_get_or_create(slug="team-notes", owner=user)
    again = services.collection_get_or_create(slug="team-notes", name="Other name")

    assert again.pk == created.pk and again.name == "Team notes" and again.owner == user
    with pytest.raises(ValidationError):
        services.collection_get_or_create(slug="not a slug!")


# Collections -------------------------------------------------------------------------------------


def test_collection_create_owns_it_and_derives_the_slug_from_the_name(user):
    created = services.collection_create(owner=user, name="  Team Handbook 2025 ", slug="", chunk_size=300,
                                         is_public=True)

    created.refresh_from_db()
    assert (created.slug, created.name, created.owner, created.chunk_size, created.is_public) == (
        "team-handbook-2025", "Team Handbook 2025", user, 300, True)


def test_collection_create_refuses_a_taken_slug_and_bad_settings_per_field(user, collection):
    with pytest.raises(ValidationError) as taken:
        services.collection_create(owner=user, name="Another garden", slug="garden")
    assert list(taken.value.message_dict) == ["slug"]

    with pytest.raises(ValidationError) as bad:
        services.collection_create(owner=user, name="Tiny", slug="tiny", chunk_size=8)
    assert bad.value.message_dict == {"chunk_size": ["The chunk size must be between 16 and 2048 tokens."]}

    with pytest.raises(ValidationError) as overlap:
        services.collection_create(owner=user, name="Overlap", slug="overlap", chunk_size=40, chunk_overlap=40)
    assert overlap.value.message_dict == {"chunk_overlap": ["The overlap must be smaller than the chunk size."]}

    with pytest.raises(ValidationError) as no_slug:
        services.collection_create(owner=user, name="文档", slug="")  # nothing to derive a slug from
    assert "slug" in no_slug.value.message_dict

    with pytest.raises(TypeError, match="owner_id"):
        services.collection_create(owner=user, name="X", slug="x", owner_id=1)
    assert list(Collection.objects.values_list("slug", flat=True)) == ["garden"]


def test_collection_update_changes_fields_and_leaves_it_unchanged_on_error(collection):
    services.collection_update(collection=collection, name="Vegetable garden", description="Beds and pots")
    with pytest.raises(ValidationError):
        services.collection_update(collection=collection, slug="not a slug!", name="Lost")

    collection.refresh_from_db()
    assert (collection.slug, collection.name, collection.description) == ("garden", "Vegetable garden",
                                                                           "Beds and pots")


def test_collection_update_of_chunk_settings_reingests_its_documents(collection,
                                                                      django_capture_on_commit_callbacks):
    document, _ = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)
    small = Chunk.objects.filter(document=document).count()

    with django_capture_on_commit_callbacks(execute=True) as renamed:
        services.collection_update(collection=collection, name="Renamed")
    with django_capture_on_commit_callbacks(execute=True) as resized:
        services.collection_update(collection=collection, chunk_size=256)
    document.refresh_from_db()

    assert renamed == [] and enqueued_builds(resized) == 1  # a new name does not touch the chunks
    assert collection.chunk_size == 256  # the caller's object follows
    assert document.status == Document.Status.READY
    assert document.built_signature == collection.pipeline_signature()
    assert len(assert_chunks_tile(document)) < small


def test_collection_share_replaces_readers_and_editors(collection, user, other_user, django_user_model):
    carol = django_user_model.objects.create_user(username="carol")
    sharing.collection_share(collection=collection, readers=[user, carol], editors=[other_user])
    sharing.collection_share(collection=collection, readers=[carol], editors=[])
    sharing.collection_share(collection=collection, editors=[user])  # readers left as they are

    assert list(collection.readers.all()) == [carol]
    assert list(collection.editors.all()) == [user]


def test_collection_delete_removes_documents_chunks_and_files(collection, django_capture_on_commit_callbacks):
    kept = Collection.objects.create(slug="kept", name="Kept", chunk_size=32, chunk_overlap=0)
    document, _ = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)
    other, _ = ingest(kept, GUIDE_V2, capture=django_capture_on_commit_callbacks)
    path = Path(document.file.path)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.collection_delete(collection=collection)
    assert path.exists()  # files go only once the deletion has committed
    for callback in callbacks:
        callback()

    assert not Collection.objects.filter(slug="garden").exists()
    assert not Document.objects.filter(pk=document.pk).exists()
    assert not Chunk.objects.filter(document_id=document.pk).exists()
    assert not path.exists()
    assert Path(other.file.path).exists() and Chunk.objects.filter(document=other).exists()


# Moving documents --------------------------------------------------------------------------------


def test_move_keeps_the_chunks_when_the_settings_match(collection, django_capture_on_commit_callbacks):
    twin = Collection.objects.create(slug="twin", name="Twin", chunk_size=32, chunk_overlap=0)
    document, _ = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)
    chunk_ids = list(Chunk.objects.filter(document=document).values_list("pk", flat=True))

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        moved = services.document_move(document=document, collection=twin)

    assert callbacks == [] and moved.collection == twin
    document.refresh_from_db()
    assert document.collection == twin and document.status == Document.Status.READY
    assert list(Chunk.objects.filter(document=document).values_list("pk", flat=True)) == chunk_ids


def test_move_reingests_under_the_targets_settings(collection, django_capture_on_commit_callbacks):
    large = Collection.objects.create(slug="large", name="Large", chunk_size=256, chunk_overlap=0)
    document, _ = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)
    small = Chunk.objects.filter(document=document).count()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        services.document_move(document=document, collection=large)
    document.refresh_from_db()

    assert enqueued_builds(callbacks) == 1
    assert document.collection == large and document.status == Document.Status.READY
    assert document.built_signature == large.pipeline_signature()
    assert len(assert_chunks_tile(document)) < small


def test_move_onto_an_existing_source_is_a_clear_error(collection, django_capture_on_commit_callbacks):
    target = Collection.objects.create(slug="target", name="Target", chunk_size=32, chunk_overlap=0)
    document, _ = ingest(collection, GUIDE_V1, capture=django_capture_on_commit_callbacks)
    ingest(target, GUIDE_V2, capture=django_capture_on_commit_callbacks)

    with pytest.raises(ValidationError) as clash:
        services.document_move(document=document, collection=target)

    assert clash.value.messages == ["guide.md: the collection 'Target' already has a document with this source."]
    document.refresh_from_db()
    assert document.collection == collection


# Uploads -----------------------------------------------------------------------------------------


def test_documents_upload_reports_per_file_and_ingests_the_good_ones(collection, settings,
                                                                     django_capture_on_commit_callbacks):
    settings.MAX_UPLOAD_BYTES = 1000
    files = [SimpleUploadedFile("empty.md", b""), SimpleUploadedFile("guide.md", GUIDE_V1),
             SimpleUploadedFile("notes.xyz", b"what is this"), SimpleUploadedFile("huge.txt", b"x" * 1001),
             SimpleUploadedFile("more.md", GUIDE_V2)]

    with django_capture_on_commit_callbacks(execute=True):
        results = services.documents_upload(collection=collection, files=files)

    assert [(r.name, r.accepted) for r in results] == [
        ("empty.md", False), ("guide.md", True), ("notes.xyz", False), ("huge.txt", False), ("more.md", True)]
    assert results[0].error == uploads.upload_error("empty.md", 0) == "empty.md: the file is empty."
    assert results[2].error.startswith("notes.xyz: this file type is not supported")
    assert results[3].error == "huge.txt: the file is 1.0 KB; the limit is 1.0 KB."
    assert sorted(Document.objects.values_list("source", "status")) == [("guide.md", "ready"), ("more.md", "ready")]
    assert {r.document.pk for r in results if r.accepted} == set(Document.objects.values_list("pk", flat=True))


def test_a_long_non_ascii_name_is_stored_under_at_most_255_bytes(collection, django_capture_on_commit_callbacks):
    name = "é" * 200 + ".md"  # 403 bytes of UTF-8

    with django_capture_on_commit_callbacks(execute=True):
        result = services.document_upload(collection=collection, file=SimpleUploadedFile(name, GUIDE_V1))

    document = Document.objects.get()
    assert result.accepted and document.source == name  # the source keeps the whole name
    stored = Path(document.file.path).name
    assert stored.endswith(".md") and stored.startswith("é" * 100)
    assert len(stored.encode()) <= 255
    assert document.status == Document.Status.READY, document.error


@pytest.mark.parametrize(("filename", "expected"), [
    ("notes.md", "notes.md"),
    ("dir/sub/notes.md", "notes.md"),
    ("C:\\Users\\me\\notes.md", "notes.md"),
    ("my notes (1).md", "my_notes_1.md"),
    ("..", "document"),
    ("???.txt", "document.txt"),
    ("ü" * 300, "ü" * 123),
    ("a" * 300 + ".docx", "a" * 242 + ".docx"),
    ("x." + "y" * 40, "x." + "y" * 40),  # a long "extension" is no extension: cut like the rest
])
def test_stored_name_is_safe_and_at_most_the_byte_limit(filename, expected):
    name = services.stored_name(filename)

    assert name == expected
    assert len(name.encode()) <= services.STORED_NAME_MAX_BYTES < 255


@pytest.mark.parametrize(("name", "expected"), [
    ("invoice\u202egpj.md", "invoicegpj.md"),       # right-to-left override
    ("a\u200bb\u2066c.txt", "abc.txt"),              # zero-width space, isolate
    ("tab\there\nnew\x00.md", "tab here new.md"),   # controls: spaces stay spaces, others go
    ("  notes/plan\u00a0v2.md ", "notes/plan v2.md"),
])
def test_clean_name_drops_control_and_format_characters(name, expected):
    assert uploads.clean_name(name) == expected


@pytest.mark.django_db
def test_an_explicit_source_is_cleaned_like_a_file_name(collection):
    result = services.document_upload(collection=collection, file=SimpleUploadedFile("notes.md", GUIDE_V1),
                                      source="evil\u202etxt.md")

    assert result.accepted and result.document.source == "eviltxt.md"
