"""Where a model's chunk vectors live, and the SQL that reads and writes them.

The column model's vectors (corpus.vectors.column_model) are corpus_chunk.embedding
(vector(EMBEDDING_DIMENSIONS), its own HNSW index). Any other model's are rows of corpus_chunkvector
(chunk_id, model, embedding vector without a dimension); an HNSW index needs a dimension, so each
model gets a partial expression index
`USING hnsw ((embedding::vector(D)) vector_cosine_ops) WHERE model = '<model>'`, which a query uses when
it orders by the same expression under the same WHERE (chat/retrieval/vector.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from django.db import connection

from corpus.models import HNSW_EF_CONSTRUCTION, HNSW_M
from corpus.vectors import column_model, vector_text


def in_column(model: str) -> bool:
    return model == column_model()


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


# Rows per statement when writing vectors (a 384-d vector is ~4 KB of SQL text).
WRITE_BATCH = 500


def write(model: str, chunk_ids: Sequence[int], vectors: np.ndarray) -> int:
    """Store `model`'s vectors of these chunks; a chunk that already has one keeps it (a rerun
    after an interruption redoes nothing). Returns how many rows were written: the database's
    count, so a chunk written meanwhile by another run is not counted twice."""
    if not len(chunk_ids):
        return 0
    rows = [(pk, vector_text(v)) for pk, v in zip(chunk_ids, vectors, strict=True)]
    if not in_column(model):
        ensure_index(model, len(vectors[0]))  # a collection created on this model may be its first user
    written = 0
    with connection.cursor() as cursor:
        for start in range(0, len(rows), WRITE_BATCH):
            part = rows[start:start + WRITE_BATCH]
            values = ", ".join(["(%s, %s::vector)"] * len(part))
            params = [value for row in part for value in row]
            if in_column(model):
                # Only chunks still without one: the column model's vectors are NULL for chunks
                # published while the collection was on another model.
                cursor.execute(f"UPDATE corpus_chunk c SET embedding = v.e FROM (VALUES {values}) AS v(id, e) "
                               "WHERE c.id = v.id AND c.embedding IS NULL", params)
            else:
                cursor.execute("INSERT INTO corpus_chunkvector (chunk_id, model, embedding) "
                               f"SELECT v.id, %s, v.e FROM (VALUES {values}) AS v(id, e) "
                               "JOIN corpus_chunk c ON c.id = v.id ON CONFLICT DO NOTHING", [model, *params])
            written += cursor.rowcount
    return written


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
