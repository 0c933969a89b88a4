"""A folder source synced again and again while its files are added, edited and deleted: the counts
and the documents follow, through the real ingestion pipeline (eager tasks, real Postgres)."""

from __future__ import annotations

import os

import pytest

from corpus.models import Document
from sources import services
from sources.models import Source, SourceDocument
from sources.sync import LOCK_CLASS, source_sync
from tests.sources.helpers import write

pytestmark = pytest.mark.django_db


def sync(source, capture):
    with capture(execute=True):
        result = source_sync(source_id=source.pk)
    source.refresh_from_db()
    return result


@pytest.fixture
def folder_source(allowed_root, collection, user, eager_media, django_capture_on_commit_callbacks):
    handbook = allowed_root / "handbook"
    write(handbook / "intro.md", "# Intro\n\nThe lighthouse keeper logs the weather every hour.\n")
    write(handbook / "guides" / "boats.txt", "Rowing boats are stored in the north shed.\n")
    write(handbook / "notes.bin", "not a supported type")
    write(handbook / ".hidden.md", "# Hidden\n\nnever read\n")
    with django_capture_on_commit_callbacks(execute=False):
        source = services.source_create(collection=collection, kind="folder", path="handbook", schedule="hourly",
                                        tags=["handbook"], created_by=user, sync=False)
    return source


def test_it_syncs_added_edited_and_deleted_files(folder_source, allowed_root, django_capture_on_commit_callbacks):
    handbook = allowed_root / "handbook"
    first = sync(folder_source, django_capture_on_commit_callbacks)
    assert first.counts == {"new": 2, "changed": 0, "unchanged": 0, "removed": 0, "failed": 0}
    documents = {d.source: d for d in Document.objects.filter(collection=folder_source.collection)}
    assert set(documents) == {"handbook/intro.md", "handbook/guides/boats.txt"}
    intro = documents["handbook/intro.md"]
    assert intro.status == Document.Status.READY
    assert "lighthouse keeper" in intro.text
    assert intro.metadata["source_kind"] == "file"
    assert intro.metadata["path"] == "handbook/intro.md"
    assert intro.metadata["tags"] == ["handbook"]
    assert folder_source.last_new == 2 and folder_source.state == Source.State.IDLE
    assert folder_source.next_sync_at > folder_source.sync_finished_at

    again = sync(folder_source, django_capture_on_commit_callbacks)
    assert again.counts == {"new": 0, "changed": 0, "unchanged": 2, "removed": 0, "failed": 0}

    # Edited (a new mtime), touched without a change (same content, new mtime), added, deleted.
    write(handbook / "intro.md", "# Intro\n\nThe keeper now logs the tides as well.\n", mtime=2_000_000_000)
    os.utime(handbook / "guides" / "boats.txt", (2_000_000_000, 2_000_000_000))
    write(handbook / "safety.md", "# Safety\n\nLife jackets hang by the door.\n")
    third = sync(folder_source, django_capture_on_commit_callbacks)
    assert third.counts == {"new": 1, "changed": 1, "unchanged": 1, "removed": 0, "failed": 0}
    intro = Document.objects.get(collection=folder_source.collection, source="handbook/intro.md")
    assert "tides" in intro.text and "weather" not in intro.text
    assert intro.pk == documents["handbook/intro.md"].pk  # updated in place, not replaced

    (handbook / "guides" / "boats.txt").unlink()
    fourth = sync(folder_source, django_capture_on_commit_callbacks)
    assert fourth.counts == {"new": 0, "changed": 0, "unchanged": 2, "removed": 1, "failed": 0}
    assert set(Document.objects.filter(collection=folder_source.collection).values_list("source", flat=True)) == {
        "handbook/intro.md", "handbook/safety.md"}
    assert SourceDocument.objects.filter(source=folder_source).count() == 2
    assert folder_source.counts == fourth.counts


def test_a_failing_file_is_listed_with_its_reason(folder_source, allowed_root, django_capture_on_commit_callbacks):
    write(allowed_root / "handbook" / "empty.md", "")
    result = sync(folder_source, django_capture_on_commit_callbacks)
    assert result.new == 2 and result.failed == 1
    assert folder_source.failures[0]["item"] == "empty.md"
    assert "empty" in folder_source.failures[0]["reason"].lower()
    assert not Document.objects.filter(source="handbook/empty.md").exists()


def test_an_uploaded_document_of_the_same_name_is_not_taken_over(folder_source, collection,
                                                                   django_capture_on_commit_callbacks):
    from corpus.services import document_ingest

    uploaded = document_ingest(collection=collection, source="handbook/intro.md", data=b"# Mine\n\nhand made\n",
                               filename="intro.md")
    result = sync(folder_source, django_capture_on_commit_callbacks)
    assert result.new == 1 and result.failed == 1
    assert "already has a document" in folder_source.failures[0]["reason"]
    uploaded.refresh_from_db()
    assert "hand made" in uploaded.file.read().decode()


def test_a_missing_folder_fails_the_sync_and_removes_nothing(folder_source, allowed_root,
                                                             django_capture_on_commit_callbacks):
    sync(folder_source, django_capture_on_commit_callbacks)
    (allowed_root / "handbook").rename(allowed_root / "moved")
    result = sync(folder_source, django_capture_on_commit_callbacks)
    assert result.error and "no such folder" in result.error
    assert folder_source.state == Source.State.FAILED and folder_source.error == result.error
    assert Document.objects.filter(collection=folder_source.collection).count() == 2


def test_a_second_sync_while_one_runs_does_nothing(folder_source):
    from django.db import connections

    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [LOCK_CLASS, folder_source.pk])
        result = source_sync(source_id=folder_source.pk)
        assert result.busy and result.counts == {"new": 0, "changed": 0, "unchanged": 0, "removed": 0, "failed": 0}
        assert not Document.objects.exists()
    finally:
        other.close()


def test_a_link_swapped_in_after_listing_is_not_read(folder_source, allowed_root, tmp_path,
                                                      django_capture_on_commit_callbacks):
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nthe database password\n")
    (allowed_root / "handbook" / "link.md").symlink_to(secret)
    sync(folder_source, django_capture_on_commit_callbacks)
    assert not Document.objects.filter(text__contains="database password").exists()
    assert not Document.objects.filter(source__endswith="link.md").exists()


def test_a_skipped_link_is_listed_with_its_reason(folder_source, allowed_root, tmp_path,
                                                  django_capture_on_commit_callbacks):
    from sources.folders import LINKED_FILE, LINKED_FOLDER

    outside = tmp_path / "outside"
    write(outside / "secret.md", "# Secret\n\nnot in the source's folder\n")
    (allowed_root / "handbook" / "linked.md").symlink_to(outside / "secret.md")
    (allowed_root / "handbook" / "elsewhere").symlink_to(outside, target_is_directory=True)
    result = sync(folder_source, django_capture_on_commit_callbacks)
    assert result.new == 2 and result.failed == 0
    assert {"item": "linked.md", "reason": LINKED_FILE} in folder_source.failures
    assert {"item": "elsewhere", "reason": LINKED_FOLDER} in folder_source.failures
    assert not Document.objects.filter(source__contains="secret").exists()
