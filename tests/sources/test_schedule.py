"""The periodic task Celery beat runs every minute: it syncs the sources that are due, once each,
and schedules their next sync."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from sources import services
from sources.models import Source
from sources.tasks import sync_due_sources
from tests.sources.helpers import write

pytestmark = pytest.mark.django_db


@pytest.fixture
def sources(allowed_root, collection):
    write(allowed_root / "handbook" / "a.md", "# A\n\nalpha\n")
    (allowed_root / "other").mkdir()
    write(allowed_root / "other" / "b.md", "# B\n\nbeta\n")
    due = services.source_create(collection=collection, kind="folder", path="handbook", schedule="hourly", sync=False)
    manual = services.source_create(collection=collection, kind="folder", path="other", schedule="none", sync=False)
    return due, manual


def test_due_sources_are_synced_and_rescheduled(sources, eager_media):
    due, manual = sources
    Source.objects.filter(pk=due.pk).update(next_sync_at=timezone.now() - timedelta(minutes=1))
    assert sync_due_sources() == [due.pk]
    due.refresh_from_db()
    manual.refresh_from_db()
    assert due.last_new == 1 and due.state == Source.State.IDLE
    assert timedelta(minutes=59) < due.next_sync_at - due.sync_finished_at <= timedelta(hours=1)
    assert manual.sync_finished_at is None and manual.next_sync_at is None
    assert sync_due_sources() == []  # not due again for an hour


def test_a_source_already_queued_is_not_queued_twice(sources, settings):
    due, _ = sources
    Source.objects.filter(pk=due.pk).update(next_sync_at=timezone.now() - timedelta(minutes=1),
                                            state=Source.State.QUEUED)
    assert sync_due_sources() == []
    # ...unless it has waited past STALE_AFTER (a lost message): then it is queued again.
    Source.objects.filter(pk=due.pk).update(next_sync_at=timezone.now() - timedelta(hours=2))
    settings.CELERY_TASK_ALWAYS_EAGER = False
    from ragweb.celery import app

    app.conf.task_always_eager = True  # run inline, but the point is the selection
    try:
        assert sync_due_sources() == [due.pk]
    finally:
        app.conf.task_always_eager = False
