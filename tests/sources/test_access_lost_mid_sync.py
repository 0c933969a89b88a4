"""A sync under way when its owner loses write access to the collection stops before its next item
(sources.sync checks between items): nothing more is written in their name, the source is paused
with an audit entry, and whoever takes it over goes on where it stopped."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from audit.models import Action, AuditEvent
from corpus.models import Document
from sources import services
from sources.models import Source
from sources.ownership import source_take_over
from sources.sync import source_sync
from tests.sources.helpers import allow_folders, write

pytestmark = pytest.mark.django_db


@pytest.fixture
def carols_folder(allowed_root, collection, carol, eager_media, django_capture_on_commit_callbacks):
    """Three files in a folder source of carol's, an editor of alice's collection."""
    collection.editors.add(carol)
    allow_folders(carol)
    for name in ("a.md", "b.md", "c.md"):
        write(allowed_root / "handbook" / name, f"# {name}\n\nThe {name} page of the handbook.\n")
    with django_capture_on_commit_callbacks(execute=False):
        return services.source_create(collection=collection, kind="folder", path="handbook", schedule="daily",
                                      created_by=carol, sync=False)


def _sync_losing_access_after_the_first_item(source, lose, capture):
    def progress(outcome, item):
        if not progress.done:
            progress.done = True
            lose()

    progress.done = False
    with capture(execute=True):
        return source_sync(source_id=source.pk, progress=progress)


@pytest.mark.parametrize("how", ["taken off the editors", "deactivated without a signal"])
def test_a_sync_under_way_stops_when_its_owner_loses_write_access(carols_folder, collection, carol, user, how,
                                                                 django_capture_on_commit_callbacks):
    def lose():
        if how == "taken off the editors":
            collection.editors.remove(carol)  # the receivers pause the source at once
        else:
            get_user_model().objects.filter(pk=carol.pk).update(is_active=False)  # no signal: the sync finds it

    result = _sync_losing_access_after_the_first_item(carols_folder, lose, django_capture_on_commit_callbacks)
    assert result.paused and result.counts["new"] == 1 and not result.more
    assert Document.objects.filter(collection=collection).count() == 1  # b.md and c.md not written
    carols_folder.refresh_from_db()
    assert carols_folder.paused_reason.startswith("Paused: carol may no longer change documents")
    assert result.error == carols_folder.paused_reason
    assert carols_folder.state == Source.State.IDLE and carols_folder.sync_round["done"] == 1
    paused = AuditEvent.objects.filter(action=Action.SOURCE_PAUSED, target_id=str(carols_folder.pk))
    assert [event.detail["owner"] for event in paused] == ["carol"]
    assert not AuditEvent.objects.filter(action=Action.SOURCE_SYNCED).exists()

    source_take_over(source=carols_folder, user=user)  # alice goes on where it stopped, in her name
    with django_capture_on_commit_callbacks(execute=True):
        resumed = source_sync(source_id=carols_folder.pk)
    assert resumed.counts["new"] == 3 and not resumed.paused and not resumed.error
    uploaded = dict(Document.objects.values_list("source", "uploaded_by__username"))
    assert uploaded == {"handbook/a.md": "carol", "handbook/b.md": "alice", "handbook/c.md": "alice"}


def test_nothing_is_removed_once_the_owner_lost_access(carols_folder, collection, carol, allowed_root,
                                                       django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert source_sync(source_id=carols_folder.pk).counts["new"] == 3
    (allowed_root / "handbook" / "c.md").unlink()
    result = _sync_losing_access_after_the_first_item(
        carols_folder, lambda: collection.editors.remove(carol), django_capture_on_commit_callbacks)
    assert result.paused and result.counts["removed"] == 0
    assert Document.objects.filter(collection=collection).count() == 3
