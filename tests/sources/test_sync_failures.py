"""A sync that stops (an unexpected error, a worker that dies) shows as failed with its reason,
never as queued or syncing for ever; a file of a folder source swapped for something else between
listing and reading is refused, not read or waited on."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from corpus.models import Document
from sources import services
from sources.kinds import folder as folder_kind
from sources.models import Source
from sources.sync import LOCK_CLASS, source_sync
from sources.tasks import sync_due_sources
from tests.sources.helpers import write

pytestmark = pytest.mark.django_db


@pytest.fixture
def folder_source(allowed_root, collection, user, eager_media, django_capture_on_commit_callbacks):
    write(allowed_root / "handbook" / "intro.md", "# Intro\n\nThe lighthouse keeper logs the weather.\n")
    write(allowed_root / "handbook" / "guides" / "boats.md", "# Boats\n\nRowing boats are in the north shed.\n")
    with django_capture_on_commit_callbacks(execute=False):
        return services.source_create(collection=collection, kind="folder", path="handbook", schedule="none",
                                      created_by=user, sync=False)


def test_a_sync_that_crashes_is_marked_failed_with_the_reason(folder_source, monkeypatch):
    def broken(source, **_):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(folder_kind, "list_items", broken)
    Source.objects.filter(pk=folder_source.pk).update(schedule=Source.Schedule.HOURLY, next_sync_at=timezone.now())
    with pytest.raises(RuntimeError):
        source_sync(source_id=folder_source.pk)
    folder_source.refresh_from_db()
    assert folder_source.state == Source.State.FAILED
    assert "RuntimeError: disk on fire" in folder_source.error and folder_source.sync_finished_at is not None
    # Due again in an hour, not at the next beat tick (a crash would repeat every minute).
    assert folder_source.next_sync_at > timezone.now() + timedelta(minutes=59)
    assert not Source.objects.due(timezone.now()).exists()


def test_a_sync_left_syncing_by_a_dead_worker_is_marked_failed_by_the_next_tick(folder_source, allowed_root,
                                                                               collection):
    running = services.source_create(collection=collection, kind="folder", path=str(allowed_root), schedule="none",
                                     sync=False)
    Source.objects.filter(pk__in=[folder_source.pk, running.pk]).update(state=Source.State.SYNCING)
    other = connections.create_connection("default")  # a live worker still syncing `running`
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [LOCK_CLASS, running.pk])
        assert sync_due_sources() == []
        states = dict(Source.objects.values_list("pk", "state"))
        assert states == {folder_source.pk: Source.State.FAILED, running.pk: Source.State.SYNCING}
        assert "stopped before it finished" in Source.objects.get(pk=folder_source.pk).error
    finally:
        other.close()


def test_the_source_polled_after_sync_now_says_failed_when_the_sync_crashed(
        folder_source, user, monkeypatch, eager_media, django_capture_on_commit_callbacks):
    from rest_framework.test import APIClient

    monkeypatch.setattr(folder_kind, "list_items", lambda source, **_: 1 / 0)
    client = APIClient()
    client.force_authenticate(user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/sources/{folder_source.pk}/sync/")
    assert response.status_code == 202
    shown = client.get(response.json()["url"]).json()
    assert shown["state"] == "failed" and "ZeroDivisionError" in shown["last_sync"]["error"]


def test_a_file_swapped_for_a_fifo_after_listing_fails_without_blocking(folder_source, allowed_root, monkeypatch,
                                                                         django_capture_on_commit_callbacks):
    fifo = allowed_root / "handbook" / "intro.md"
    listing = folder_kind.list_items
    intro_only = [item for item in listing(folder_source).items if item.key == "intro.md"]

    def listed_then_swapped(source, **_):
        fifo.unlink()
        os.mkfifo(fifo)  # a read of it would wait for a writer for ever
        return folder_kind.Listing(intro_only)

    monkeypatch.setattr(folder_kind, "list_items", listed_then_swapped)
    with django_capture_on_commit_callbacks(execute=True):
        result = source_sync(source_id=folder_source.pk)
    assert result.failed == 1 and "not a regular file" in result.failures[0]["reason"]
    assert not Document.objects.exists()


def test_a_folder_swapped_for_a_link_out_after_listing_is_not_read(folder_source, allowed_root, tmp_path,
                                                                    django_capture_on_commit_callbacks, monkeypatch):
    outside = tmp_path / "outside"
    write(outside / "boats.md", "# Secret\n\nthe database password\n")
    listing = folder_kind.list_items

    def listed_then_swapped(source, **_):
        listed = listing(source)
        guides = allowed_root / "handbook" / "guides"
        (guides / "boats.md").unlink()
        guides.rmdir()
        guides.symlink_to(outside)
        return listed

    monkeypatch.setattr(folder_kind, "list_items", listed_then_swapped)
    with django_capture_on_commit_callbacks(execute=True):
        result = source_sync(source_id=folder_source.pk)
    assert result.new == 1 and result.failed == 1, result
    assert "link out of the source's folder" in result.failures[0]["reason"]
    assert not Document.objects.filter(text__contains="database password").exists()


@pytest.mark.django_db(transaction=True)  # the link's foreign key is checked at a real commit
def test_a_source_deleted_during_its_sync_leaves_no_document_behind(folder_source, django_capture_on_commit_callbacks):
    """The sync reads the second file after the source (and the first file's document) is gone: the
    second document is not kept without its source, and the sync ends on the error."""
    read_item = folder_kind.read_item
    reads = []

    def deleting_after_the_first(source, item, link):
        reads.append(item.key)
        if len(reads) == 2:
            services.source_delete(source=Source.objects.get(pk=source.pk))
        return read_item(source, item, link)

    folder_kind.read_item = deleting_after_the_first
    try:
        with django_capture_on_commit_callbacks(execute=True), pytest.raises(Exception):  # noqa: B017, PT011
            source_sync(source_id=folder_source.pk)
    finally:
        folder_kind.read_item = read_item
    assert len(reads) == 2
    assert not Source.objects.exists() and not Document.objects.exists()


def test_a_very_deep_tree_is_listed_down_to_the_depth_limit_without_crashing(tmp_path):
    from sources.folders import MAX_FOLDER_DEPTH, folder_files

    deep = tmp_path
    for level in range(1, 201):
        deep = deep / "d"
        if level in (3, MAX_FOLDER_DEPTH, MAX_FOLDER_DEPTH + 1):
            write(deep / f"at-{level}.md", f"# Level {level}\n")
    deep.mkdir(parents=True)
    files, truncated = folder_files(tmp_path, limit=10)
    assert [f.path.name for f in files] == ["at-3.md", f"at-{MAX_FOLDER_DEPTH}.md"] and not truncated
