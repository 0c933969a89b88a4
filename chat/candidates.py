"""The one statement that fetches search candidates: vector side, keyword side, or both.

Both sides run as CTEs of a single SELECT (one round trip after the SET LOCALs); the rows come
back with each side's rank, the cosine similarity and the BM25 score, so fusion and relevance
calibration (pure Python, chat/fusion.py and chat/relevance.py) need no further query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction

from chat.bm25 import keyword_ctes
from chat.vector import VECTOR_CTES, session_settings_sql, vector_literal

MODES = ("hybrid", "vector", "keyword", "ts_rank_cd")


@dataclass
class Candidate:
    chunk_id: int
    document_id: int
    collection_id: int
    chunk_index: int
    text: str
    start: int
    end: int
    page: int | None
    title: str
    source: str
    vector_rank: int | None
    keyword_rank: int | None
    similarity: float | None
    bm25: float | None
    keyword_score: float | None  # the keyword side's ranking score (BM25 or ts_rank_cd)


@dataclass
class CandidateSet:
    candidates: list[Candidate]
    idf_sum: float | None  # sum of the query lexemes' IDFs, the BM25 normaliser
    vector_scan: str | None = None  # "hnsw" or "exact": how the vector side was searched


def _statement(mode: str) -> str:
    uses_vector = mode in ("hybrid", "vector")
    uses_keyword = mode in ("hybrid", "keyword", "ts_rank_cd")
    ctes = []
    if uses_vector:
        ctes.append(VECTOR_CTES)
    if uses_keyword:
        ctes.append(keyword_ctes("ts_rank_cd" if mode == "ts_rank_cd" else "bm25", with_vector=uses_vector))
    sides = []
    if uses_vector:
        sides.append("SELECT id FROM vec")
    if uses_keyword:
        sides.append("SELECT id FROM kw")
    ctes.append("ids AS (" + " UNION ".join(sides) + ")")
    vector_rank = "v.rank" if uses_vector else "NULL::bigint"
    scan = ("(SELECT CASE WHEN EXISTS (SELECT 1 FROM vec_exact) THEN 'exact' ELSE 'hnsw' END)" if uses_vector
            else "NULL::text")
    if mode == "ts_rank_cd":
        keyword_cols = "k.rank, NULL::float8, ks.score, NULL::float8"
    elif uses_keyword:
        # Not among the matches: no essential query term, BM25 taken as 0.
        keyword_cols = "k.rank, coalesce(ks.score, 0), ks.score, (SELECT total FROM kw_idf_sum)"
    else:
        keyword_cols = "NULL::bigint, NULL::float8, NULL::float8, NULL::float8"
    joins = []
    if uses_vector:
        joins.append("LEFT JOIN vec v ON v.id = c.id")
    if uses_keyword:
        joins.append("LEFT JOIN kw k ON k.id = c.id LEFT JOIN kw_scored ks ON ks.id = c.id")
    return (
        "WITH " + ",".join(ctes) + "\n"
        "SELECT c.id, c.document_id, d.collection_id, c.chunk_index, c.text, c.start, c.\"end\", c.page, "
        "d.title, d.source, " + vector_rank + ", " + keyword_cols + ", "
        "1 - (c.embedding <=> %(vector)s::vector), " + scan + " "
        "FROM ids JOIN corpus_chunk c ON c.id = ids.id JOIN corpus_document d ON d.id = c.document_id "
        + " ".join(joins)
    )


def fetch_candidates(*, query: str, vector: Sequence[float], collection_ids: list[int], mode: str,
                     candidates: int) -> CandidateSet:
    """Up to `candidates` chunks per side (both sides for hybrid), unordered."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    params = {
        "query": query,
        "vector": vector_literal(vector),
        "collections": list(collection_ids),
        "candidates": int(candidates),
        "exact_max": int(settings.SEARCH_EXACT_MAX_CHUNKS),
        "k1": float(settings.SEARCH_BM25_K1),
        "b": float(settings.SEARCH_BM25_B),
        "term_postings": int(settings.SEARCH_BM25_TERM_POSTINGS),
        "pool": max(int(settings.SEARCH_BM25_POOL), int(candidates)),
    }
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(session_settings_sql())
        cursor.execute(_statement(mode), params)
        rows = cursor.fetchall()
    result = []
    idf_sum = None
    scan = None
    for (chunk_id, document_id, collection_id, chunk_index, text, start, end, page, title, source,
         vector_rank, keyword_rank, bm25, keyword_score, idf_total, similarity, row_scan) in rows:
        idf_sum, scan = idf_total, row_scan
        result.append(Candidate(
            chunk_id=chunk_id, document_id=document_id, collection_id=collection_id, chunk_index=chunk_index,
            text=text, start=start, end=end, page=page, title=title, source=source,
            vector_rank=vector_rank, keyword_rank=keyword_rank,
            similarity=None if similarity is None else float(similarity),
            bm25=None if bm25 is None else float(bm25),
            keyword_score=None if keyword_score is None else float(keyword_score),
        ))
    return CandidateSet(result, None if idf_sum is None else float(idf_sum), scan)
