"""What the chat app does when the corpus changes (corpus.signals): fill the sentence-vector store
of a document once it is published, and of every document of a collection switched to another
embedding model, so that the first answers over them embed no sentence."""

from __future__ import annotations

from django.conf import settings
from django.dispatch import receiver

from corpus.models import Document
from corpus.signals import collection_model_switched, document_published

# Filling is worth less than building the next document (which makes it searchable at all): with
# the Redis broker a higher number is taken after every waiting message of a lower one (kombu's
# priority steps 0, 3, 6, 9; a message without a priority is 0), so a bulk upload is ready first
# and its sentence vectors follow.
FILL_PRIORITY = 9


@receiver(document_published, dispatch_uid="chat_fill_sentence_vectors")
def fill_published(*, document_id: int, **kwargs) -> None:
    from chat.tasks import fill_sentence_vectors_task

    if settings.ANSWER_VECTORS_AT_INGESTION:
        fill_sentence_vectors_task.apply_async((document_id,), priority=FILL_PRIORITY)


@receiver(collection_model_switched, dispatch_uid="chat_refill_sentence_vectors")
def refill_collection(*, collection_id: int, model: str, **kwargs) -> None:
    from chat.tasks import fill_sentence_vectors_task

    if settings.ANSWER_VECTORS_AT_INGESTION:
        for document_id in Document.objects.filter(collection_id=collection_id).values_list("pk", flat=True):
            fill_sentence_vectors_task.apply_async((document_id,), priority=FILL_PRIORITY)
