"""The one order in which writers lock corpus rows, so that two of them never wait for each other.

LOCK ORDER: a transaction that locks a collection's row and rows of its documents locks the
collection first, then the documents. (Advisory locks, such as the pipeline's per-document lock
and a source sync's, come before any row lock.)

- collection_update, collection_delete and a re-embed's switch lock the collection FOR UPDATE, then
  (collection_update, through document_reingest) each document;
- everything that changes one document (publishing its chunks, re-ingest, move, tags, a new upload
  of its source) takes its collection FOR KEY SHARE first, then the document FOR UPDATE: the key
  share waits for a collection_update or a re-embed's switch under way and lets other documents'
  writers through.

Publishing once locked the document and then the collection while collection_update locked the
collection and then each document: two such transactions deadlocked (tests/corpus/test_lock_order.py).
"""

from __future__ import annotations

from django.db import connection

from corpus.models import Collection, Document


def collection_key_share(collection_id: int) -> None:
    """Lock the collection's row FOR KEY SHARE until the transaction ends (see LOCK ORDER)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {connection.ops.quote_name(Collection._meta.db_table)} "
                       "WHERE id = %s FOR KEY SHARE", [collection_id])


def document_for_update(pk: int) -> Document | None:
    """Document `pk` (with its collection, read after the lock) locked FOR UPDATE until the
    transaction ends, its collection's row locked FOR KEY SHARE first (LOCK ORDER); None if it does
    not exist. Call it inside a transaction."""
    while True:
        collection_id = Document.objects.filter(pk=pk).values_list("collection_id", flat=True).first()
        if collection_id is None:
            return None
        collection_key_share(collection_id)
        document = (Document.objects.select_for_update(of=("self",)).select_related("collection")
                    .filter(pk=pk).first())
        if document is None or document.collection_id == collection_id:
            return document
        # Moved to another collection between the two reads: lock that one as well, in order.
