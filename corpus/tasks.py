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
from django.db import DatabaseError, connection

from corpus.graph.merge import MERGE_PRIORITY, graph_merge
from corpus.ingest import pipeline
from corpus.reembed.services import reembed_run

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


@shared_task(name="corpus.reembed_collection", max_retries=MAX_RETRIES, autoretry_for=pipeline.TRANSIENT_ERRORS,
             retry_backoff=5, retry_backoff_max=300, retry_jitter=True)
def reembed_collection_task(collection_id: int) -> str:
    """Re-embed one collection with its queued model (corpus.reembed.services.reembed_run)."""
    return reembed_run(collection_id)


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
