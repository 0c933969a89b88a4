"""Celery tasks of the ingestion pipeline. They take ids and call corpus.ingest.pipeline; no logic here.

acks_late (settings): a task whose worker dies is redelivered after the broker's visibility
timeout, and processing is safe to repeat (see corpus.ingest.pipeline). A worker that starts
requeues at once the documents a dead worker left in progress, without waiting for that timeout,
and enqueues the queued ones again (a message lost while the broker was down would wait forever).
Temporary errors (database or broker gone for a moment) are retried by Celery with exponential
backoff; when the retries run out, the document is marked failed with the reason.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import DatabaseError, connection

from corpus.graph.merge import MERGE_PRIORITY, graph_merge
from corpus.ingest import pipeline
from corpus.reembed.services import reembed_fail, reembed_run

logger = logging.getLogger(__name__)

MAX_RETRIES = 8
BUSY_COUNTDOWN = 30  # seconds before looking again at a document another worker is processing


class ProcessDocument(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        if isinstance(exc, pipeline.TRANSIENT_ERRORS) and args:
            logger.error("document %s: giving up after %s retries: %s", args[0], MAX_RETRIES, exc)
            try:
                pipeline.mark_failed(args[0], f"Processing kept failing on a temporary error: {exc}")
            except DatabaseError:
                logger.exception("could not mark document %s failed", args[0])


@shared_task(bind=True, base=ProcessDocument, name="corpus.process_document", max_retries=MAX_RETRIES,
             autoretry_for=pipeline.TRANSIENT_ERRORS, retry_backoff=5, retry_backoff_max=300, retry_jitter=True)
def process_document_task(self, document_id: int) -> str:
    try:
        return pipeline.process_document(document_id)
    except pipeline.DocumentBusy as exc:
        # Stay queued until the other run ends; then this run finds the document up to date.
        raise self.retry(exc=exc, countdown=BUSY_COUNTDOWN, max_retries=None) from exc


# A re-embed runs in slices this long (plus the batch under way: reembed.services.BATCH_CHUNKS chunks, ~12 s at
# 21 chunks/s), each task queueing the next, at most a third of the broker's visibility timeout
# (settings.CELERY_VISIBILITY_TIMEOUT, 600 s): the message is acknowledged before Redis would hand it
# to a second worker.
REEMBED_SLICE_SECONDS = 60.0


def reembed_slice_seconds() -> float:
    return min(REEMBED_SLICE_SECONDS, settings.CELERY_VISIBILITY_TIMEOUT / 3)


class ReembedCollection(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        if isinstance(exc, pipeline.TRANSIENT_ERRORS) and args:
            logger.error("re-embed of collection %s: giving up after %s retries: %s", args[0], MAX_RETRIES, exc)
            try:
                reembed_fail(args[0], f"Re-embedding kept failing on a temporary error: {exc}")
            except DatabaseError:
                logger.exception("could not mark the re-embed of collection %s failed", args[0])


@shared_task(bind=True, base=ReembedCollection, name="corpus.reembed_collection", max_retries=MAX_RETRIES,
             autoretry_for=pipeline.TRANSIENT_ERRORS, retry_backoff=5, retry_backoff_max=300, retry_jitter=True)
def reembed_collection_task(self, collection_id: int) -> str:
    """Re-embed one collection with its queued model for a slice of time (corpus.reembed.services.
    reembed_run), then queue the rest. A second delivery while a run holds the collection looks
    again later (the first may die); after it, it finds nothing to do."""
    outcome = reembed_run(collection_id, seconds=reembed_slice_seconds())
    if outcome == "busy":
        raise self.retry(countdown=BUSY_COUNTDOWN, max_retries=None)
    if outcome == "more":
        reembed_collection_task.delay(collection_id)
    return outcome


# Its priority is the task's own, so every sender (publish, the task itself, beat's sweep) queues it there.
@shared_task(name="corpus.graph_merge", max_retries=MAX_RETRIES, autoretry_for=pipeline.TRANSIENT_ERRORS,
             retry_backoff=5, retry_backoff_max=300, retry_jitter=True, priority=MERGE_PRIORITY)
def graph_merge_task() -> int:
    """Move published chunks into the HNSW graph for a while (corpus.graph.merge); queue the rest
    again, at the same low priority, so documents waiting to be built go first. Also run by Celery
    beat (settings.CELERY_BEAT_SCHEDULE), which picks up a tail left by a crash."""
    run = graph_merge()
    if run.left and not run.locked_out:  # a merger locked out leaves the rest to the one running
        graph_merge_task.delay()
    return run.merged


@worker_ready.connect
def requeue_stalled_documents(**kwargs) -> None:
    try:
        ids = pipeline.requeue_stalled()
        # Also those already queued: a duplicate message is a no-op, a lost one would wait forever.
        ids += [pk for pk in pipeline.queued_document_ids() if pk not in ids]
        for document_id in ids:
            process_document_task.delay(document_id)
    except pipeline.TRANSIENT_ERRORS:
        logger.warning("could not look for documents left in progress by a dead worker", exc_info=True)
    finally:
        connection.close()  # the worker's main process forks pool processes: share no connection
