"""Celery tasks of the chat app. They take ids and call a service; no logic here."""

from __future__ import annotations

from celery import shared_task

from chat.answering.sentence_fill import document_fill
from corpus.ingest.pipeline import TRANSIENT_ERRORS


@shared_task(name="chat.fill_sentence_vectors", max_retries=5, autoretry_for=TRANSIENT_ERRORS, retry_backoff=5,
             retry_backoff_max=300, retry_jitter=True)
def fill_sentence_vectors_task(document_id: int) -> int:
    """Store the vectors of a published document's sentences (chat.answering.sentence_fill)."""
    return document_fill(document_id)
