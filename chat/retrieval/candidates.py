"""The statements that fetch search candidates: vector side, keyword side, or both.

Each mode is one SELECT with the sides as CTEs, sent with its SET LOCALs (one round trip); the rows
come back with each side's rank, the cosine similarity and the BM25 score, so fusion and
relevance calibration (pure Python, chat/retrieval/fusion.py and chat/retrieval/relevance.py) need no further query.
The rows carry no text: of a hundred-odd candidates a search returns ten or so, and their text is
read with the segments' (chat.retrieval.segments.fetch_texts); reading it here cost ~7% of this stage.

The keyword side of a hybrid search needs only the query's words, not its vector: a search
starts it on a second connection before it embeds the query (run_keyword_half, chat/retrieval/early.py).
That half also brings back what the vector half will need from it: the query's terms with their
IDFs (QueryTerms), so the vector half scores its chunks' BM25 without reading statistics, and its
chunks' embeddings, so their similarity to the query is a matrix product here rather than a
second scan in the vector half. Once the vector is known, only the vector half runs: the nearest
chunks, their place and their BM25. Without a side connection, a hybrid search is one statement.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

from chat.retrieval.bm25 import TERMS_COLUMNS, given_terms_scored_cte, keyword_ctes
from chat.retrieval.vector import VECTOR_CTES, execute_with_session_settings, vector_literal

MODES = ("hybrid", "vector", "keyword", "ts_rank_cd")


@dataclass
class Candidate:
    chunk_id: int
    document_id: int
    collection_id: int
    chunk_index: int
    text: str | None  # not fetched with the candidates: chat.retrieval.segments.fetch_texts fills the returned ones
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


@dataclass(frozen=True)
class QueryTerms:
    """The query's lexemes held by the searched collections, their IDFs, and the collections'
    average chunk length: all BM25 needs besides a chunk's postings."""

    lexemes: list[str]
    idfs: list[float]
    avglen: float | None


@dataclass
class CandidateSet:
    candidates: list[Candidate]
    idf_sum: float | None  # sum of the query lexemes' IDFs, the BM25 normaliser
    identifiers: int | None = None  # the query's underscore identifiers that the collections hold
    vector_scan: str | None = None  # "hnsw" or "exact": how the vector side was searched
    elapsed_ms: float | None = None  # a keyword half's time on its side connection
    # A keyword half's extras for its vector half: the terms, and each chunk's embedding.
    terms: QueryTerms | None = None
    embeddings: dict[int, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class _Sides:
    vector: bool  # search the vector side
    keyword: str | None  # search the keyword side, scored "bm25" or "ts_rank_cd"
    similarity: bool = True  # the rows' cosine similarity (needs the query's vector)
    for_vector_half: bool = False  # also the terms and the chunks' embeddings (a keyword half)


_MODE_SIDES = {
    "hybrid": _Sides(vector=True, keyword="bm25"),
    "vector": _Sides(vector=True, keyword=None),
    "keyword": _Sides(vector=False, keyword="bm25"),
    "ts_rank_cd": _Sides(vector=False, keyword="ts_rank_cd"),
}
# A hybrid search split in two: the keyword half, run before the query's vector exists, and the
# vector half (_VECTOR_HALF), which adds what the one statement would have.
_KEYWORD_HALF = _Sides(vector=False, keyword="bm25", similarity=False, for_vector_half=True)


@cache
def _statement(sides: _Sides) -> str:
    ctes = []
    if sides.vector:
        ctes.append(VECTOR_CTES)
    if sides.keyword:
        ctes.append(keyword_ctes(sides.keyword, with_vector=sides.vector))
    searched = (["SELECT id FROM vec"] if sides.vector else []) + (["SELECT id FROM kw"] if sides.keyword else [])
    ctes.append("ids AS (" + " UNION ".join(searched) + ")")
    vector_rank = "v.rank" if sides.vector else "NULL::bigint"
    scan = ("(SELECT CASE WHEN EXISTS (SELECT 1 FROM vec_exact) THEN 'exact' ELSE 'hnsw' END)" if sides.vector
            else "NULL::text")
    keyword_rank = "k.rank" if sides.keyword else "NULL::bigint"
    if sides.keyword == "ts_rank_cd":
        keyword_cols = "NULL::float8, ks.score, NULL::float8, NULL::bigint"
    elif sides.keyword:
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
    if sides.keyword:
        joins.append("LEFT JOIN kw_scored ks ON ks.id = c.id")
    # pgvector's binary form of the embedding (a 4-byte header, then big-endian float4s): a tenth
    # of the text form's parsing.
    extras = ", vector_send(c.embedding), " + TERMS_COLUMNS if sides.for_vector_half else ""
    return (
        "WITH " + ",".join(ctes) + "\n"
        "SELECT c.id, c.document_id, d.collection_id, c.chunk_index, c.start, c.\"end\", c.page, "
        "d.title, d.source, " + vector_rank + ", " + keyword_rank + ", " + keyword_cols + ", "
        + similarity + ", " + scan + extras + " "
        "FROM ids JOIN corpus_chunk c ON c.id = ids.id JOIN corpus_document d ON d.id = c.document_id "
        + " ".join(joins)
    )


# The vector half: the nearest chunks, each with its place and document (read by the vector
# CTEs), and its BM25 from the keyword half's terms.
_VECTOR_HALF = (
    "WITH " + VECTOR_CTES + "," + given_terms_scored_cte("SELECT id FROM vec") + "\n"
    "SELECT v.id, v.document_id, v.collection_id, v.chunk_index, v.start, v.\"end\", v.page, v.title, v.source, "
    "v.rank, coalesce(ks.score, 0), ks.score, 1 - v.distance, "
    "(SELECT CASE WHEN EXISTS (SELECT 1 FROM vec_exact) THEN 'exact' ELSE 'hnsw' END) "
    "FROM vec v LEFT JOIN kw_scored ks ON ks.id = v.id"
)

# The values that change from one search to the next; the others are fixed by settings and k.
_PER_SEARCH = {"query": "text", "vector": "vector", "collections": "bigint[]",
               "lexemes": "text[]", "idfs": "float8[]", "avglen": "float8"}


def _float(value) -> float | None:
    return None if value is None else float(value)


def _candidate(row: Sequence, vector_rank, keyword_rank, bm25, keyword_score, similarity) -> Candidate:
    chunk_id, document_id, collection_id, chunk_index, start, end, page, title, source = row[:9]
    return Candidate(chunk_id=chunk_id, document_id=document_id, collection_id=collection_id,
                     chunk_index=chunk_index, text=None, start=start, end=end, page=page, title=title, source=source,
                     vector_rank=vector_rank, keyword_rank=keyword_rank, similarity=_float(similarity),
                     bm25=_float(bm25), keyword_score=_float(keyword_score))


def _fetch(sql: str, params: dict) -> list[tuple]:
    with connection.cursor() as cursor:
        execute_with_session_settings(cursor, sql, params, parameter_types=_PER_SEARCH)
        return cursor.fetchall()


def _run(sides: _Sides, params: dict) -> CandidateSet:
    result = []
    idf_sum = identifiers = scan = terms = None
    embeddings = {}
    for row in _fetch(_statement(sides), params):
        vector_rank, keyword_rank, bm25, keyword_score, idf_total, row_identifiers, similarity, row_scan = row[9:17]
        idf_sum, identifiers, scan = idf_total, row_identifiers, row_scan
        result.append(_candidate(row, vector_rank, keyword_rank, bm25, keyword_score, similarity))
        if sides.for_vector_half:
            embedding, lexemes, idfs, avglen = row[17:]
            if embedding is not None:
                embeddings[row[0]] = np.frombuffer(embedding, dtype=">f4", offset=4)
            terms = QueryTerms(lexemes or [], [float(idf) for idf in idfs or []], _float(avglen))
    return CandidateSet(result, _float(idf_sum), identifiers, scan, terms=terms, embeddings=embeddings)


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


def _with_keyword_half(by_keyword: CandidateSet, vector: Sequence[float], params: dict) -> CandidateSet:
    """The vector half, given the keyword half's result, merged into what the one-statement
    hybrid returns: the same chunks, ranks and scores (the keyword side's similarities computed
    here in double precision, where pgvector sums in single: they agree to about 1e-6)."""
    terms = by_keyword.terms or QueryTerms([], [], None)  # no keyword rows: no term the collections hold
    rows = _fetch(_VECTOR_HALF, {**params, "lexemes": terms.lexemes, "idfs": terms.idfs, "avglen": terms.avglen})
    merged = {c.chunk_id: c for c in by_keyword.candidates}
    scan = None
    for row in rows:
        vector_rank, bm25, keyword_score, similarity, scan = row[9:]
        found = merged.get(row[0])
        if found is None:
            merged[row[0]] = _candidate(row, vector_rank, None, bm25, keyword_score, similarity)
        else:  # its BM25 and keyword rank are the keyword half's (set in place: replace() cost 0.25 ms)
            found.vector_rank, found.similarity = vector_rank, float(similarity)
    _set_similarities([c for c in by_keyword.candidates if c.vector_rank is None], by_keyword.embeddings, vector)
    idf_sum = by_keyword.idf_sum if by_keyword.idf_sum is not None else 0.0
    identifiers = by_keyword.identifiers if by_keyword.identifiers is not None else 0
    return CandidateSet(list(merged.values()), idf_sum, identifiers, scan, by_keyword.elapsed_ms)


def _set_similarities(candidates: list[Candidate], embeddings: dict[int, np.ndarray], vector: Sequence[float]) -> None:
    """Each candidate's cosine similarity to `vector`, from its embedding (None without one)."""
    with_embedding = [c for c in candidates if c.chunk_id in embeddings]
    if not with_embedding:
        return
    matrix = np.stack([embeddings[c.chunk_id] for c in with_embedding]).astype(np.float64)
    query = np.asarray(vector, dtype=np.float32).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        similarities = matrix @ query / np.sqrt((matrix * matrix).sum(axis=1) * (query @ query))
    for c, similarity in zip(with_embedding, similarities.tolist(), strict=True):
        # pgvector clamps rounding overshoot to [-1, 1]; a zero vector has no direction.
        c.similarity = min(max(similarity, -1.0), 1.0) if np.isfinite(similarity) else None


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
            return _with_keyword_half(by_keyword, vector, params)
    return _run(_MODE_SIDES[mode], params)
