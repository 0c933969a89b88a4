"""What the corpus tells the layers above it, which it may not import (chat fills its sentence-vector
store from these). Sent after the change is committed, with send_robust: a receiver that fails is
logged and never undoes or fails the corpus's own work."""

from __future__ import annotations

import logging

from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger(__name__)

# document_id: the document's chunks were (re)built and are searchable.
document_published = Signal()
# collection_id, model: the collection now searches `model`'s vectors (corpus.reembed).
collection_model_switched = Signal()


def send_on_commit(signal: Signal, **kwargs) -> None:
    """Send `signal` once the current transaction commits (at once outside one)."""
    def send() -> None:
        for receiver, result in signal.send_robust(sender=None, **kwargs):
            if isinstance(result, Exception):
                logger.error("%s failed on %s", getattr(receiver, "__name__", receiver), kwargs, exc_info=result)

    transaction.on_commit(send)
