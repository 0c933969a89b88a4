"""The statements that fetch search candidates: vector side, keyword side, or both.

Each mode is one SELECT with the sides as CTEs, sent with its SET LOCALs (one round trip); the rows
come back with each side's rank, the cosine similarity and the BM25 score, so fusion and
relevance calibration (pure Python, chat/fusion.py and chat/relevance.py) need no further query.
The rows carry no text: of a hundred-odd candidates a search returns ten or so, and their text is
read with the segments' (chat.segments.fetch_texts); reading it here cost ~7% of this stage.
Outside a transaction a hybrid search is split in two halves run at the same time on two
connections (chat/side_connection.py): the search then waits for the slower side, not both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

from chat import side_connection
from chat.bm25 import keyword_ctes, vector_bm25_ctes
from chat.vector import VECTOR_CTES, execute_with_session_settings, vector_literal

MODES = ("hybrid", "vector", "keyword", "ts_rank_cd")


@dataclass
class Candidate:
    chunk_id: int
    document_id: int
    collection_id: int
    chunk_index: int
    text: str | None  # not fetched with the candidates: chat.segments.fetch_texts fills the returned ones
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


@dataclass(frozen=True)
class _Sides:
    vector: bool  # search the vector side
    keyword: str | None  # search the keyword side, scored "bm25" or "ts_rank_cd"
    vector_bm25: bool = False  # BM25 scores for the vector side's chunks, without a keyword search


_MODE_SIDES = {
    "hybrid": _Sides(vector=True, keyword="bm25"),
    "vector": _Sides(vector=True, keyword=None),
    "keyword": _Sides(vector=False, keyword="bm25"),
    "ts_rank_cd": _Sides(vector=False, keyword="ts_rank_cd"),
}
# A hybrid search split over two connections: each half returns what the other would have
# added (the BM25 of the vector side's chunks, the similarity of the keyword side's).
_HYBRID_HALVES = (_Sides(vector=True, keyword=None, vector_bm25=True), _Sides(vector=False, keyword="bm25"))


@cache
def _statement(sides: _Sides) -> str:
    ctes = []
    if sides.vector:
        ctes.append(VECTOR_CTES)
    if sides.keyword:
        ctes.append(keyword_ctes(sides.keyword, with_vector=sides.vector))
    elif sides.vector_bm25:
        ctes.append(vector_bm25_ctes())
    searched = (["SELECT id FROM vec"] if sides.vector else []) + (["SELECT id FROM kw"] if sides.keyword else [])
    ctes.append("ids AS (" + " UNION ".join(searched) + ")")
    vector_rank = "v.rank" if sides.vector else "NULL::bigint"
    scan = ("(SELECT CASE WHEN EXISTS (SELECT 1 FROM vec_exact) THEN 'exact' ELSE 'hnsw' END)" if sides.vector
            else "NULL::text")
    keyword_rank = "k.rank" if sides.keyword else "NULL::bigint"
    if sides.keyword == "ts_rank_cd":
        keyword_cols = "NULL::float8, ks.score, NULL::float8"
    elif sides.keyword or sides.vector_bm25:
        # Not among the scored chunks: no query term, BM25 taken as 0.
        keyword_cols = "coalesce(ks.score, 0), ks.score, (SELECT total FROM kw_idf_sum)"
    else:
        keyword_cols = "NULL::float8, NULL::float8, NULL::float8"
    # The vector side's chunks have their distance already: only the others' is computed here
    # (COALESCE evaluates lazily).
    similarity = ("1 - coalesce(v.distance, c.embedding <=> %(vector)s::vector)" if sides.vector
                  else "1 - (c.embedding <=> %(vector)s::vector)")
    joins = []
    if sides.vector:
        joins.append("LEFT JOIN vec v ON v.id = c.id")
    if sides.keyword:
        joins.append("LEFT JOIN kw k ON k.id = c.id")
    if sides.keyword or sides.vector_bm25:
        joins.append("LEFT JOIN kw_scored ks ON ks.id = c.id")
    return (
        "WITH " + ",".join(ctes) + "\n"
        "SELECT c.id, c.document_id, d.collection_id, c.chunk_index, c.start, c.\"end\", c.page, "
        "d.title, d.source, " + vector_rank + ", " + keyword_rank + ", " + keyword_cols + ", "
        + similarity + ", " + scan + " "
        "FROM ids JOIN corpus_chunk c ON c.id = ids.id JOIN corpus_document d ON d.id = c.document_id "
        + " ".join(joins)
    )


# The values that change from one search to the next; the others are fixed by settings and k.
_PER_SEARCH = {"query": "text", "vector": "vector", "collections": "bigint[]"}


def _run(sides: _Sides, params: dict) -> CandidateSet:
    with connection.cursor() as cursor:
        execute_with_session_settings(cursor, _statement(sides), params, parameter_types=_PER_SEARCH)
        rows = cursor.fetchall()
    result = []
    idf_sum = None
    scan = None
    for (chunk_id, document_id, collection_id, chunk_index, start, end, page, title, source,
         vector_rank, keyword_rank, bm25, keyword_score, idf_total, similarity, row_scan) in rows:
        idf_sum, scan = idf_total, row_scan
        result.append(Candidate(
            chunk_id=chunk_id, document_id=document_id, collection_id=collection_id, chunk_index=chunk_index,
            text=None, start=start, end=end, page=page, title=title, source=source,
            vector_rank=vector_rank, keyword_rank=keyword_rank,
            similarity=None if similarity is None else float(similarity),
            bm25=None if bm25 is None else float(bm25),
            keyword_score=None if keyword_score is None else float(keyword_score),
        ))
    return CandidateSet(result, None if idf_sum is None else float(idf_sum), scan)


def _run_hybrid_in_parallel(params: dict) -> CandidateSet:
    """The keyword half on a side connection while this thread runs the vector half, merged into
    what the one-statement hybrid returns (the same chunks, ranks and scores)."""
    vector_half, keyword_half = _HYBRID_HALVES
    pending = side_connection.try_submit(lambda: _run(keyword_half, params))
    if pending is None:  # every side connection is busy
        return _run(_MODE_SIDES["hybrid"], params)
    by_vector = _run(vector_half, params)
    try:
        by_keyword = pending.result()
    except (OperationalError, InterfaceError):
        by_keyword = _run(keyword_half, params)  # the side connection failed: run it here
    merged = {c.chunk_id: c for c in by_keyword.candidates}
    for c in by_vector.candidates:
        found = merged.get(c.chunk_id)
        merged[c.chunk_id] = c if found is None else replace(found, vector_rank=c.vector_rank)
    idf_sum = by_keyword.idf_sum if by_keyword.idf_sum is not None else by_vector.idf_sum
    return CandidateSet(list(merged.values()), idf_sum, by_vector.vector_scan)


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
    if mode == "hybrid" and side_connection.available():
        return _run_hybrid_in_parallel(params)
    return _run(_MODE_SIDES[mode], params)
