"""Celery tasks of the ingestion pipeline. They take ids and call corpus.pipeline; no logic here.

acks_late (settings): a task whose worker dies is redelivered after the broker's visibility
timeout, and processing is safe to repeat (see corpus.ingest.pipeline).
"""

from __future__ import annotations

import logging

from celery import shared_task

from corpus.ingest import pipeline

logger = logging.getLogger(__name__)

MAX_RETRIES = 8
BUSY_COUNTDOWN = 30  # seconds before looking again at a document another worker is processing


@shared_task(bind=True, name="corpus.process_document", max_retries=MAX_RETRIES)
def process_document_task(self, document_id: int) -> str:
    try:
        return pipeline.process_document(document_id)
    except pipeline.DocumentBusy as exc:
        # Stay queued until the other run ends; then this run finds the document up to date.
        raise self.retry(exc=exc, countdown=BUSY_COUNTDOWN, max_retries=None) from exc
    except pipeline.TRANSIENT_ERRORS as exc:
        if self.request.retries >= MAX_RETRIES:
            logger.error("document %s: giving up after %s retries: %s", document_id, MAX_RETRIES, exc)
            pipeline.mark_failed(document_id, f"Processing kept failing on a temporary error: {exc}")
            raise
        countdown = min(300, 5 * 2 ** self.request.retries)
        logger.warning("document %s: temporary error (%s); retrying in %ss", document_id, exc, countdown)
        raise self.retry(exc=exc, countdown=countdown) from exc
