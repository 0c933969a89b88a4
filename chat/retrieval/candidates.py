"""The statements that fetch search candidates: vector side, keyword side, or both.

Each mode is one SELECT with the sides as CTEs, sent with its SET LOCALs on the request's own
connection to the database reads use (replicas.routing.read_connection: a replica or the primary),
in one round trip; the rows come back with each side's rank, the cosine similarity and the BM25
score, so fusion and relevance calibration (pure Python, chat/retrieval/fusion.py and
chat/retrieval/relevance.py) need no further query. In hybrid mode every candidate has both
scores: the statement computes the similarity of the keyword side's chunks and the BM25 of the
vector side's. The rows carry no text: of a hundred-odd candidates a search returns ten or so,
and their text is read with the segments' (chat/retrieval/segment_text.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

from chat.retrieval import tuning
from chat.retrieval.bm25 import keyword_ctes
from chat.retrieval.filters import NO_FILTERS, SearchFilters
from chat.retrieval.types import Candidate
from chat.retrieval.vector import (
    COLUMN,
    QUERY_VECTOR_CTE,
    VectorSource,
    execute_with_session_settings,
    side,
    vector_ctes,
)
from corpus.vectors import vector_text
from replicas.routing import read_connection

MODES = ("hybrid", "vector", "keyword")


@dataclass
class CandidateSet:
    candidates: list[Candidate]
    idf_sum: float | None  # sum of the query lexemes' IDFs, the BM25 normaliser
    identifiers: int | None = None  # the query's underscore identifiers that the collections hold
    vector_scan: str | None = None  # "hnsw" or "exact": how the vector side was searched


@dataclass(frozen=True)
class _Sides:
    vector: bool  # search the vector side
    keyword: bool  # search the keyword side (BM25)


_MODE_SIDES = {
    "hybrid": _Sides(vector=True, keyword=True),
    "vector": _Sides(vector=True, keyword=False),
    "keyword": _Sides(vector=False, keyword=True),
}


@cache
def _statement(sides: _Sides, document_filter: str = "", source: VectorSource = COLUMN) -> str:
    """The statement for `sides`; `document_filter` restricts both sides' chunks to the documents
    passing the metadata filters (SearchFilters.document_condition(), "" for none); the chunks'
    vectors are read from `source` (chat/retrieval/vector.py)."""
    ctes = [QUERY_VECTOR_CTE]
    if sides.vector:
        ctes.append(vector_ctes(document_filter=document_filter, source=source))
    if sides.keyword:
        ctes.append(keyword_ctes(with_vector=sides.vector, document_filter=document_filter))
    searched = (["SELECT id FROM vec"] if sides.vector else []) + (["SELECT id FROM kw"] if sides.keyword else [])
    ctes.append("ids AS (" + " UNION ".join(searched) + ")")
    vector_rank = "v.rank" if sides.vector else "NULL::bigint"
    scan = ("(SELECT CASE WHEN EXISTS (SELECT 1 FROM vec_exact) THEN 'exact' ELSE 'hnsw' END)" if sides.vector
            else "NULL::text")
    keyword_rank = "k.rank" if sides.keyword else "NULL::bigint"
    if sides.keyword:
        # Not among the scored chunks: no query term, BM25 taken as 0.
        keyword_cols = "coalesce(ks.score, 0), (SELECT total FROM kw_idf_sum), (SELECT identifiers FROM kw_idf_sum)"
    else:
        keyword_cols = "NULL::float8, NULL::float8, NULL::bigint"
    # The vector side's chunks have their distance already: only the others' is computed here
    # (COALESCE evaluates lazily).
    chunk_vector = "c.embedding" if source == COLUMN else source.embedding.replace("cv.", "cvs.")
    if sides.vector:
        similarity = f"1 - coalesce(v.distance, {chunk_vector} <=> (SELECT v FROM query_vector))"
    else:
        similarity = f"1 - ({chunk_vector} <=> (SELECT v FROM query_vector))"
    joins = [source.similarity_join] if source.similarity_join else []
    if sides.vector:
        joins.append("LEFT JOIN vec v ON v.id = c.id")
    if sides.keyword:
        joins.append("LEFT JOIN kw k ON k.id = c.id")
        joins.append("LEFT JOIN kw_scored ks ON ks.id = c.id")
    return (
        "WITH " + ",".join(ctes) + "\n"
        "SELECT c.id, c.document_id, d.collection_id, c.chunk_index, c.start, c.\"end\", c.page, "
        "d.title, d.source, " + vector_rank + ", " + keyword_rank + ", " + keyword_cols + ", "
        + similarity + ", " + scan + " "
        "FROM ids JOIN corpus_chunk c ON c.id = ids.id JOIN corpus_document d ON d.id = c.document_id "
        + " ".join(joins)
    )


def _float(value) -> float | None:
    return None if value is None else float(value)


def _run(sides: _Sides, params: dict, filters: SearchFilters, source: VectorSource) -> CandidateSet:
    with read_connection().cursor() as cursor:
        execute_with_session_settings(cursor, _statement(sides, filters.document_condition("d"), source),
                                      {**params, **filters.parameters()})
        rows = cursor.fetchall()
    result = []
    idf_sum = identifiers = scan = None
    for row in rows:
        chunk_id, document_id, collection_id, chunk_index, start, end, page, title, source = row[:9]
        vector_rank, keyword_rank, bm25, idf_sum, identifiers, similarity, scan = row[9:]
        result.append(Candidate(
            chunk_id=chunk_id, document_id=document_id, collection_id=collection_id, chunk_index=chunk_index,
            text=None, start=start, end=end, page=page, title=title, source=source, vector_rank=vector_rank,
            keyword_rank=keyword_rank, similarity=_float(similarity), bm25=_float(bm25)))
    return CandidateSet(result, _float(idf_sum), identifiers, scan)


def _parameters(query: str, vector: Sequence[float], collection_ids: list[int], candidates: int) -> dict:
    return {
        "query": query,
        "vector": vector_text(vector),
        "collections": list(collection_ids),
        "candidates": int(candidates),
        "exact_max": int(tuning.EXACT_MAX_CHUNKS),
        "k1": float(tuning.BM25_K1),
        "b": float(tuning.BM25_B),
        "term_postings": int(tuning.BM25_TERM_POSTINGS),
        "pool": max(int(tuning.BM25_POOL), int(candidates)),
    }


def fetch_candidates(*, query: str, vector: Sequence[float], collection_ids: list[int], mode: str,
                     candidates: int, filters: SearchFilters = NO_FILTERS, model: str | None = None) -> CandidateSet:
    """Up to `candidates` chunks per side (both sides for hybrid), unordered, in one statement;
    only chunks of documents passing `filters` (chat/retrieval/filters.py). `model`: None for
    collections whose vectors are Chunk.embedding, else the model whose corpus_chunkvector rows
    they search (`vector` is then that model's embedding of the query)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    params = _parameters(query, vector, collection_ids, candidates)
    source = COLUMN
    if model is not None:
        source = side(len(vector))
        params["model"] = model
    return _run(_MODE_SIDES[mode], params, filters, source)


def merge_candidate_sets(sets: list[CandidateSet]) -> CandidateSet:
    """One query's candidates from collections searched with different models (one set per
    model), as one set: each side's ranks are redrawn over all of them, by similarity for the
    vector side and BM25 for the keyword side. A single set is returned as it is."""
    if len(sets) == 1:
        return sets[0]
    merged = [c for s in sets for c in s.candidates]
    vector = sorted((c for c in merged if c.vector_rank), key=lambda c: -(c.similarity or 0.0))
    keyword = sorted((c for c in merged if c.keyword_rank), key=lambda c: -(c.bm25 or 0.0))
    vector_ranks = {c.chunk_id: i for i, c in enumerate(vector, 1)}
    keyword_ranks = {c.chunk_id: i for i, c in enumerate(keyword, 1)}
    candidates = [replace(c, vector_rank=vector_ranks.get(c.chunk_id), keyword_rank=keyword_ranks.get(c.chunk_id))
                  for c in merged]
    idf = [s.idf_sum for s in sets if s.idf_sum is not None]
    identifiers = [s.identifiers for s in sets if s.identifiers is not None]
    scans = [s.vector_scan for s in sets if s.vector_scan]
    return CandidateSet(candidates, max(idf) if idf else None, max(identifiers) if identifiers else None,
                        scans[0] if scans else None)
