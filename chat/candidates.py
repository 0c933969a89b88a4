"""The statements that fetch search candidates: vector side, keyword side, or both.

Each mode is one SELECT with the sides as CTEs, sent with its SET LOCALs (one round trip); the rows
come back with each side's rank, the cosine similarity and the BM25 score, so fusion and
relevance calibration (pure Python, chat/fusion.py and chat/relevance.py) need no further query.
The rows carry no text: of a hundred-odd candidates a search returns ten or so, and their text is
read with the segments' (chat.segments.fetch_texts); reading it here cost ~7% of this stage.

The keyword side of a hybrid search needs only the query's words, not its vector: a search
starts it on a second connection before it embeds the query (run_keyword_half, chat/early.py),
and once the vector is known runs the vector side with the keyword side's chunks added, for their
similarity. Without that, a hybrid search is one statement.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

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
    identifiers: int | None = None  # the query's underscore identifiers that the collections hold
    vector_scan: str | None = None  # "hnsw" or "exact": how the vector side was searched
    elapsed_ms: float | None = None  # a keyword half's time on its side connection


@dataclass(frozen=True)
class _Sides:
    vector: bool  # search the vector side
    keyword: str | None  # search the keyword side, scored "bm25" or "ts_rank_cd"
    vector_bm25: bool = False  # BM25 scores for the vector side's chunks, without a keyword search
    similarity: bool = True  # the rows' cosine similarity (needs the query's vector)
    extra: bool = False  # rows for the chunks listed in %(extra)s too (their similarity, with vector)


_MODE_SIDES = {
    "hybrid": _Sides(vector=True, keyword="bm25"),
    "vector": _Sides(vector=True, keyword=None),
    "keyword": _Sides(vector=False, keyword="bm25"),
    "ts_rank_cd": _Sides(vector=False, keyword="ts_rank_cd"),
}
# A hybrid search split in two: the keyword half, run before the query's vector exists, and the
# vector half, which adds what the one statement would have: the BM25 of its own chunks and the
# similarity of the keyword half's (passed as %(extra)s).
_KEYWORD_HALF = _Sides(vector=False, keyword="bm25", similarity=False)
_VECTOR_HALF = _Sides(vector=True, keyword=None, vector_bm25=True, extra=True)


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
    if sides.extra:
        searched.append("SELECT unnest(%(extra)s::bigint[])")
    ctes.append("ids AS (" + " UNION ".join(searched) + ")")
    vector_rank = "v.rank" if sides.vector else "NULL::bigint"
    scan = ("(SELECT CASE WHEN EXISTS (SELECT 1 FROM vec_exact) THEN 'exact' ELSE 'hnsw' END)" if sides.vector
            else "NULL::text")
    keyword_rank = "k.rank" if sides.keyword else "NULL::bigint"
    if sides.keyword == "ts_rank_cd":
        keyword_cols = "NULL::float8, ks.score, NULL::float8, NULL::bigint"
    elif sides.keyword or sides.vector_bm25:
        # Not among the scored chunks: no query term, BM25 taken as 0.
        keyword_cols = ("coalesce(ks.score, 0), ks.score, (SELECT total FROM kw_idf_sum), "
                        "(SELECT identifiers FROM kw_idf_sum)")
    else:
        keyword_cols = "NULL::float8, NULL::float8, NULL::float8, NULL::bigint"
    # The vector side's chunks have their distance already: only the others' is computed here
    # (COALESCE evaluates lazily).
    if not sides.similarity:
        similarity = "NULL::float8"
    elif sides.vector:
        similarity = "1 - coalesce(v.distance, c.embedding <=> %(vector)s::vector)"
    else:
        similarity = "1 - (c.embedding <=> %(vector)s::vector)"
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
_PER_SEARCH = {"query": "text", "vector": "vector", "collections": "bigint[]", "extra": "bigint[]"}


def _run(sides: _Sides, params: dict) -> CandidateSet:
    with connection.cursor() as cursor:
        execute_with_session_settings(cursor, _statement(sides), params, parameter_types=_PER_SEARCH)
        rows = cursor.fetchall()
    result = []
    idf_sum = identifiers = scan = None
    for (chunk_id, document_id, collection_id, chunk_index, start, end, page, title, source,
         vector_rank, keyword_rank, bm25, keyword_score, idf_total, row_identifiers, similarity, row_scan) in rows:
        idf_sum, identifiers, scan = idf_total, row_identifiers, row_scan
        result.append(Candidate(
            chunk_id=chunk_id, document_id=document_id, collection_id=collection_id, chunk_index=chunk_index,
            text=None, start=start, end=end, page=page, title=title, source=source,
            vector_rank=vector_rank, keyword_rank=keyword_rank,
            similarity=None if similarity is None else float(similarity),
            bm25=None if bm25 is None else float(bm25),
            keyword_score=None if keyword_score is None else float(keyword_score),
        ))
    return CandidateSet(result, None if idf_sum is None else float(idf_sum), identifiers, scan)


def _parameters(query: str, vector: Sequence[float] | None, collection_ids: list[int], candidates: int) -> dict:
    params = {
        "query": query,
        "collections": list(collection_ids),
        "candidates": int(candidates),
        "exact_max": int(settings.SEARCH_EXACT_MAX_CHUNKS),
        "k1": float(settings.SEARCH_BM25_K1),
        "b": float(settings.SEARCH_BM25_B),
        "term_postings": int(settings.SEARCH_BM25_TERM_POSTINGS),
        "pool": max(int(settings.SEARCH_BM25_POOL), int(candidates)),
    }
    if vector is not None:
        params["vector"] = vector_literal(vector)
    return params


def run_keyword_half(*, query: str, collection_ids: list[int], candidates: int) -> CandidateSet:
    """The keyword half of a hybrid search, which needs no vector: its chunks without their
    similarity, which fetch_candidates adds (`keyword_half`) once the vector is known."""
    started = time.perf_counter()
    found = _run(_KEYWORD_HALF, _parameters(query, None, collection_ids, candidates))
    found.elapsed_ms = (time.perf_counter() - started) * 1000
    return found


def _with_keyword_half(by_keyword: CandidateSet, params: dict) -> CandidateSet:
    """The vector half, given the keyword half's result, merged into what the one-statement
    hybrid returns (the same chunks, ranks and scores)."""
    by_vector = _run(_VECTOR_HALF, {**params, "extra": [c.chunk_id for c in by_keyword.candidates]})
    merged = {c.chunk_id: c for c in by_keyword.candidates}
    for c in by_vector.candidates:
        found = merged.get(c.chunk_id)
        if found is None:
            merged[c.chunk_id] = c
        else:  # its BM25 and keyword rank are the keyword half's (set in place: replace() cost 0.25 ms)
            found.vector_rank, found.similarity = c.vector_rank, c.similarity
    idf_sum = by_keyword.idf_sum if by_keyword.idf_sum is not None else by_vector.idf_sum
    identifiers = by_keyword.identifiers if by_keyword.identifiers is not None else by_vector.identifiers
    return CandidateSet(list(merged.values()), idf_sum, identifiers, by_vector.vector_scan, by_keyword.elapsed_ms)


def fetch_candidates(*, query: str, vector: Sequence[float], collection_ids: list[int], mode: str,
                     candidates: int, keyword_half: Future[CandidateSet] | None = None) -> CandidateSet:
    """Up to `candidates` chunks per side (both sides for hybrid), unordered. `keyword_half`: the
    future of this query's run_keyword_half, started earlier on another connection (hybrid only)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    params = _parameters(query, vector, collection_ids, candidates)
    if mode == "hybrid" and keyword_half is not None:
        try:
            # Embedding the query takes longer than the keyword half (docs/evaluation.md), so
            # it is normally done by now; if not, the wait is the rest of it.
            by_keyword = keyword_half.result()
        except (OperationalError, InterfaceError):
            by_keyword = None  # the side connection failed: one statement here instead
        if by_keyword is not None:
            return _with_keyword_half(by_keyword, params)
    return _run(_MODE_SIDES[mode], params)
