"""HNSW against exact search, sent the way the search sends its statements (the benchmarks').

Both sides read the chunks in the HNSW graph (`in_graph`, corpus/graph/): the index is partial, and
a statement without its predicate would not use it at all."""

from __future__ import annotations

import time

import numpy as np
from django.db import connection

from chat.retrieval import tuning
from chat.retrieval.vector import execute_with_session_settings
from corpus.vectors import vector_text


def bare_hnsw(vector: np.ndarray, k: int) -> tuple[float, list[int]]:
    """(milliseconds, ids): the k nearest chunks of the whole table by the HNSW index, with the
    search's session settings in the same round trip."""
    started = time.perf_counter()
    with connection.cursor() as cursor:
        execute_with_session_settings(cursor, "SELECT id FROM corpus_chunk WHERE in_graph "
                                      "ORDER BY embedding <=> %(vector)s::vector "
                                      "LIMIT %(k)s", {"vector": vector_text(vector), "k": k})
        ids = [r[0] for r in cursor.fetchall()]
    return (time.perf_counter() - started) * 1000, ids


def exact_nearest(vector: np.ndarray, k: int) -> list[int]:
    """The k nearest chunks of the whole table by a full scan ("+ 0" keeps the index out)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM corpus_chunk WHERE embedding IS NOT NULL AND in_graph "
                       "ORDER BY (embedding <=> %s::vector) + 0 LIMIT %s", [vector_text(vector), k])
        return [r[0] for r in cursor.fetchall()]


def nearest_in(vector: np.ndarray, collection_ids: list[int], k: int, *, exact: bool) -> list[int]:
    """The k nearest chunks of the collections: as the search's vector side finds them (the HNSW
    scan filtered by collection, iterative, its tuning.CANDIDATES candidates re-sorted by
    distance) or, `exact`, by a full scan of their chunks."""
    order = "(c.embedding <=> %(v)s::vector) + 0" if exact else "c.embedding <=> %(v)s::vector"
    with connection.cursor() as cursor:
        execute_with_session_settings(cursor, f"""
            WITH hits AS MATERIALIZED (
                SELECT c.id, c.embedding <=> %(v)s::vector AS distance FROM corpus_chunk c
                WHERE c.embedding IS NOT NULL AND c.in_graph AND c.document_id IN (
                    SELECT id FROM corpus_document WHERE collection_id = ANY(%(c)s::bigint[]))
                ORDER BY {order} LIMIT %(n)s)
            SELECT id FROM hits ORDER BY distance LIMIT %(k)s""",
            {"v": vector_text(vector), "c": collection_ids, "k": k, "n": k if exact else max(k, tuning.CANDIDATES)})
        return [r[0] for r in cursor.fetchall()]


def recall_at_k(vectors: np.ndarray, k: int, collection_ids: list[int] | None = None) -> float:
    """Mean share of the exact k nearest that the HNSW scan finds: over the whole table, or
    within `collection_ids`."""
    hits = 0
    for vector in vectors:
        if collection_ids is None:
            approx, exact = set(bare_hnsw(vector, k)[1]), set(exact_nearest(vector, k))
        else:
            approx = set(nearest_in(vector, collection_ids, k, exact=False))
            exact = set(nearest_in(vector, collection_ids, k, exact=True))
        hits += len(approx & exact)
    return hits / (len(vectors) * k) if len(vectors) else float("nan")
