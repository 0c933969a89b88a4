"""Celery tasks of sources: sync one source; every minute (Celery beat), queue the sources due.
They take ids and call sources.sync; no logic here."""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from corpus.ingest.pipeline import TRANSIENT_ERRORS
from sources.models import Source
from sources.sync import SYNC_ITEMS, source_sync, sources_mark_lost, sync_slice_seconds

logger = logging.getLogger(__name__)

SYNC_DUE_EVERY = 60.0  # seconds between looks for due sources (settings.CELERY_BEAT_SCHEDULE)
# Syncs run on a queue of their own (settings.CELERY_TASK_QUEUES), consumed by a worker of their own in
# `make run` and docker-compose: a slow site (Crawl-delay) never holds a slot that ingestion needs.
SYNC_QUEUE = "sources"
# A sync waiting for its owner's other sync (sources.sync, one per person at a time) is queued again
# after this long: short against the broker's visibility timeout (a message held past it is handed
# out twice), long enough that waiting syncs cost a worker next to nothing.
OWNER_WAIT_SECONDS = 15


@shared_task(name="sources.sync_source", queue=SYNC_QUEUE, autoretry_for=TRANSIENT_ERRORS, max_retries=5,
             retry_backoff=10, retry_backoff_max=300, retry_jitter=True)
def sync_source_task(source_id: int) -> dict | None:
    """The sync's counts (with "busy": true when another sync of the source was running), or None
    if the source is gone. One run has a budget (sources.sync.SYNC_SECONDS, SYNC_ITEMS): a sync
    that needs more ("more": true) queues its next run. One sync per owner runs at a time: one
    that must wait ("waiting": true) is queued again in OWNER_WAIT_SECONDS. A database or broker
    blip propagates to Celery's retry."""
    result = source_sync(source_id=source_id, seconds=sync_slice_seconds(), items=SYNC_ITEMS, one_per_owner=True)
    if result is None:
        logger.info("source %s: gone before its sync", source_id)
        return None
    if result.more:  # the run's budget is spent: go on behind the syncs queued meanwhile
        sync_source_task.delay(source_id)
    elif result.waiting:  # its owner's other sync holds their one slot: the worker takes other people's
        sync_source_task.apply_async((source_id,), countdown=OWNER_WAIT_SECONDS)
    return {**result.counts, "failures": result.failures, "error": result.error, "busy": result.busy,
            "more": result.more, "waiting": result.waiting}


@shared_task(name="sources.sync_due")
def sync_due_sources() -> list[int]:
    """Mark failed the syncs whose worker died (sources.sync.sources_mark_lost), then queue a sync
    of every source whose scheduled time has come; each is marked queued first, so a beat tick
    before it runs does not queue it twice."""
    sources_mark_lost()  # a sync whose worker died shows as failed within a minute, then is due again
    queued = []
    now = timezone.now()
    for pk in Source.objects.due(now).values_list("pk", flat=True):
        # Conditional: two beat ticks (or two beats) racing queue it once.
        if Source.objects.due(now).filter(pk=pk).update(state=Source.State.QUEUED):
            sync_source_task.delay(pk)
            queued.append(pk)
    return queued
