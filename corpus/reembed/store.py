"""Where a model's chunk vectors live, and the SQL that reads and writes them.

EMBEDDING_COLUMN_MODEL's vectors are corpus_chunk.embedding (vector(EMBEDDING_DIMENSIONS), its own
HNSW index). Any other model's are rows of corpus_chunkvector (chunk_id, model, embedding vector
without a dimension); an HNSW index needs a dimension, so each model gets a partial expression index
`USING hnsw ((embedding::vector(D)) vector_cosine_ops) WHERE model = '<model>'`, which a query
uses when it orders by the same expression under the same WHERE (chat/retrieval/vector.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.db import connection

from corpus.models import HNSW_EF_CONSTRUCTION, HNSW_M, Chunk, ChunkVector


def in_column(model: str) -> bool:
    return model == settings.EMBEDDING_COLUMN_MODEL


def index_name(model: str) -> str:
    """A stable, valid identifier for the model's index (a model name may be a path)."""
    return "chunkvector_hnsw_" + hashlib.sha256(model.encode()).hexdigest()[:16]


def ensure_index(model: str, dimensions: int) -> None:
    """Create the model's partial HNSW index if it does not exist yet (idempotent)."""
    if in_column(model):
        return
    # DDL takes no parameters: the name is a quoted literal (standard_conforming_strings is on
    # since Postgres 9.1, so doubling quotes is the whole escaping), the dimension an int.
    predicate = "model = '" + model.replace("'", "''") + "'"
    with connection.cursor() as cursor:
        # Looked up first: CREATE INDEX refuses to run, even when the index exists, in a
        # transaction that has written rows of the table (pending foreign-key checks).
        cursor.execute("SELECT 1 FROM pg_class WHERE relname = %s AND relkind = 'i'", [index_name(model)])
        if cursor.fetchone():
            return
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {index_name(model)} ON corpus_chunkvector "
            f"USING hnsw ((embedding::vector({int(dimensions)})) vector_cosine_ops) "
            f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) "
            f"WHERE {predicate}")


def write(model: str, chunk_ids: Sequence[int], vectors: np.ndarray) -> int:
    """Store `model`'s vectors of these chunks; a chunk that already has one keeps it (a rerun
    after an interruption redoes nothing). Returns how many were written."""
    if not len(chunk_ids):
        return 0
    if in_column(model):
        rows = [Chunk(pk=pk, embedding=v) for pk, v in zip(chunk_ids, vectors, strict=True)]
        # Only chunks still without one: the column model's vectors are NULL for chunks published
        # while the collection was on another model.
        missing = set(Chunk.objects.filter(pk__in=chunk_ids, embedding__isnull=True).values_list("pk", flat=True))
        Chunk.objects.bulk_update([r for r in rows if r.pk in missing], ["embedding"], batch_size=500)
        return len(missing)
    ensure_index(model, len(vectors[0]))  # a collection created on this model may be its first user
    created = ChunkVector.objects.bulk_create(
        [ChunkVector(chunk_id=pk, model=model, embedding=v) for pk, v in zip(chunk_ids, vectors, strict=True)],
        ignore_conflicts=True, batch_size=500)
    return len(created)


# The collection's documents having a chunk without a vector of the model. Parameters:
# collection, model, after (a document id), limit.
_LACKING = {
    "column": "c.embedding IS NULL",
    "side": "NOT EXISTS (SELECT 1 FROM corpus_chunkvector v WHERE v.chunk_id = c.id AND v.model = %(model)s)",
}
_DOCUMENTS_SQL = ("SELECT d.id, (SELECT count(*) FROM corpus_chunk n WHERE n.document_id = d.id) "
                  "FROM corpus_document d WHERE d.collection_id = %(collection)s AND d.id > %(after)s AND EXISTS "
                  "(SELECT 1 FROM corpus_chunk c WHERE c.document_id = d.id AND {lacking}) "
                  "ORDER BY d.id LIMIT %(limit)s")


def _lacking(model: str) -> str:
    return _LACKING["column" if in_column(model) else "side"]


def documents_missing(model: str, collection_id: int, *, after: int = 0, limit: int = 1000) -> list[tuple[int, int]]:
    """(document id, its chunk count) of up to `limit` of the collection's documents, by id from
    `after` on (exclusive), that have a chunk without a vector of `model`."""
    with connection.cursor() as cursor:
        cursor.execute(_DOCUMENTS_SQL.format(lacking=_lacking(model)),
                       {"collection": collection_id, "model": model, "after": after, "limit": limit})
        return cursor.fetchall()


def count_missing(model: str, collection_id: int) -> int:
    """The collection's chunks without a vector of `model`."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id "
                       f"WHERE d.collection_id = %(collection)s AND {_lacking(model)}",
                       {"collection": collection_id, "model": model})
        return cursor.fetchone()[0]


def drop(model: str, collection_id: int) -> int:
    """Delete the side-table vectors of `model` of the collection's chunks (none for the column
    model); returns how many."""
    if in_column(model):
        return 0
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM corpus_chunkvector v USING corpus_chunk c, corpus_document d "
                       "WHERE v.chunk_id = c.id AND c.document_id = d.id AND d.collection_id = %s AND v.model = %s",
                       [collection_id, model])
        return cursor.rowcount
