"""Search entry point: query -> embed -> candidates (vector + BM25) -> fusion -> [rerank] ->
relevance -> RSE -> segment text.

Permission-free: callers pass the collections the user may read
(corpus.permissions.readable_collections). See DESIGN.md "Retrieval".

Every statement runs on the caller's own Django connection to the database reads use — a read
replica when one is configured and usable, else the primary (replicas.routing: a search is
`reads_from_replica`) — so Django's connection handling (CONN_MAX_AGE, health checks, the caller's
transaction) applies: one read of the searched collections, one statement per query for its
candidates (both sides, chat/retrieval/candidates.py), and one for the text of the segments and the
returned chunks (chat/retrieval/segment_text.py).
"""

from __future__ import annotations

import time

from django.db.models import QuerySet

from chat.questions import MAX_QUESTION_CHARS
from chat.retrieval import rerank as rerank_stage
from chat.retrieval import tuning
from chat.retrieval.candidates import MODES, fetch_candidates, merge_candidate_sets
from chat.retrieval.filters import NO_FILTERS, SearchFilters
from chat.retrieval.fusion import fuse_convex, fuse_rrf, round_robin
from chat.retrieval.query_batching import embed_queries
from chat.retrieval.relevance import Calibration, blended_relevance, similarity_relevance
from chat.retrieval.rse import PRESETS, choose_segments
from chat.retrieval.segment_text import fetch_texts, read_segments
from chat.retrieval.types import Candidate, DocumentRef, RankedQuery, ScoredChunk, SearchResult
from corpus.ingest.embed import prefer_idle_threads
from corpus.models import Collection
from corpus.permissions import collection_rows as read_collection_rows
from corpus.vectors import column_model
from replicas.routing import reads_from_replica

prefer_idle_threads()  # before anything loads torch: search embeds single queries between statements

MAX_K = 100
MAX_QUERY_CHARS = MAX_QUESTION_CHARS  # a question is searched as its query: one cap
MAX_QUERIES = 8
# Bounds of a caller's RSE budget (characters): below a chunk's length nothing would fit.
MIN_MAX_CHARS = 500
MAX_MAX_CHARS = 1_000_000
FUSIONS = ("convex", "rrf")


class SearchError(ValueError):
    """Bad search input; str(exc) is a message for the person who sent it."""


def _queries(query: str | list[str]) -> list[str]:
    queries = [query] if isinstance(query, str) else list(query)
    if not queries or len(queries) > MAX_QUERIES:
        raise SearchError(f"Give between 1 and {MAX_QUERIES} queries.")
    cleaned = []
    for q in queries:
        if not isinstance(q, str) or not q.strip():
            raise SearchError("The query is empty.")
        if len(q) > MAX_QUERY_CHARS:
            raise SearchError(f"The query is longer than {MAX_QUERY_CHARS} characters.")
        cleaned.append(q.strip())
    return cleaned


def _rank_one(candidates: list[Candidate], mode: str, idf_sum: float | None,
              fusion: str, names_identifier: bool = False) -> tuple[list[Candidate], dict, dict]:
    """Order one query's candidates for `mode`; return them with their scores and relevance.
    `names_identifier`: the query names an underscore identifier the collections hold."""
    calibration = Calibration()
    best = max((c.similarity for c in candidates if c.similarity is not None), default=None)
    relevance = {}
    for c in candidates:
        if mode == "vector" or c.bm25 is None:
            relevance[c.chunk_id] = similarity_relevance(c.similarity, calibration, best)
        else:
            relevance[c.chunk_id] = blended_relevance(c.similarity, c.bm25, idf_sum, calibration, best)
    if mode == "hybrid":
        if fusion == "convex":
            # Every candidate has both scores: the statement computes the similarity of the keyword
            # side's chunks and the BM25 of the vector side's (0 without a query term).
            # An embedding cannot spell: a query naming an identifier (DJANGO_SETTINGS_MODULE) is
            # answered by the chunks that contain it, which only the keyword side matches exactly.
            share = tuning.CONVEX_IDENTIFIER_SHARE if names_identifier else tuning.CONVEX_KEYWORD_SHARE
            fused = fuse_convex([{c.chunk_id: c.similarity for c in candidates if c.similarity is not None},
                                 {c.chunk_id: c.bm25 for c in candidates if c.bm25 is not None}],
                                weights=[1.0 - share, share], tie_break=relevance)
        else:
            by_vector = sorted((c for c in candidates if c.vector_rank), key=lambda c: c.vector_rank)
            by_keyword = sorted((c for c in candidates if c.keyword_rank), key=lambda c: c.keyword_rank)
            fused = fuse_rrf([[c.chunk_id for c in by_vector], [c.chunk_id for c in by_keyword]],
                             weights=[tuning.RRF_VECTOR_WEIGHT, tuning.RRF_KEYWORD_WEIGHT],
                             k=tuning.RRF_K, tie_break=relevance)
        by_id = {c.chunk_id: c for c in candidates}
        return [by_id[i] for i, _ in fused], dict(fused), relevance
    if mode == "vector":
        ordered = sorted((c for c in candidates if c.vector_rank), key=lambda c: c.vector_rank)
        return ordered, {c.chunk_id: c.similarity or 0.0 for c in ordered}, relevance
    ordered = sorted((c for c in candidates if c.keyword_rank), key=lambda c: c.keyword_rank)
    return ordered, {c.chunk_id: c.bm25 or 0.0 for c in ordered}, relevance


# A write to the corpus earlier in the request keeps the search on the primary. Not one to the
# accounts: signing in and token use write there on every request.
@reads_from_replica(reads=("corpus",))
def search(*, query: str | list[str], collections: QuerySet[Collection], mode: str = "hybrid", k: int = 10,
           rse: str | None = "balanced", fusion: str | None = None, max_chars: int | None = None,
           filters: SearchFilters = NO_FILTERS) -> SearchResult:
    """Search `collections`. `chunks` are the k best chunks (best first; with several queries, the
    queries' lists take turns); `segments` come from RSE with preset `rse` (None: no RSE; also
    none for overlapping "sliding" collections), fitted to at most `max_chars` characters in all
    when given (the caller's context budget), the returned chunks they do not hold taking part.
    `fusion` (hybrid): "convex" or "rrf", None for tuning.FUSION. `filters` (from
    chat.retrieval.filters.parse_filters) restricts every side to the documents passing them; none
    passing is an empty result. Raises SearchError on bad input."""
    t0 = time.perf_counter()
    queries = _queries(query)
    if mode not in MODES:
        raise SearchError(f"Unknown mode {mode!r}; use one of {', '.join(MODES)}.")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise SearchError(f"k must be an integer from 1 to {MAX_K}.")
    if rse is not None and rse not in PRESETS:
        raise SearchError(f"Unknown rse preset {rse!r}; use one of {', '.join(PRESETS)} or null.")
    if max_chars is not None and (isinstance(max_chars, bool) or not isinstance(max_chars, int)
                                  or not MIN_MAX_CHARS <= max_chars <= MAX_MAX_CHARS):
        raise SearchError(f"max_chars must be an integer from {MIN_MAX_CHARS} to {MAX_MAX_CHARS}, or null.")
    fusion = tuning.FUSION if fusion is None else fusion
    if fusion not in FUSIONS:
        raise SearchError(f"Unknown fusion {fusion!r}; use one of {', '.join(FUSIONS)}.")
    timings: dict[str, float] = {}
    asked = query if isinstance(query, str) else queries

    n_candidates = max(k, tuning.CANDIDATES)
    # The collections are read first: with none to search there is nothing to embed.
    collection_rows = read_collection_rows(collections)
    collection_ids = [cid for cid, _, _ in collection_rows]
    eligible = {cid for cid, chunker, _ in collection_rows if chunker != Collection.Chunker.SLIDING}
    # Collections are searched with the model their vectors come from (a re-embed moves them one
    # by one, corpus.reembed): one statement per model, the column's model first.
    by_model: dict[str, list[int]] = {}
    in_column = column_model()
    for cid, _, model in sorted(collection_rows, key=lambda r: r[2] != in_column):
        by_model.setdefault(model, []).append(cid)
    if not collection_ids:
        timings["total"] = _ms(t0)
        return SearchResult(query=asked, mode=mode, timings_ms=timings)

    t = time.perf_counter()
    vectors = {model: embed_queries(queries, model=model) for model in by_model}
    timings["embed"] = _ms(t)

    t = time.perf_counter()
    per_query = [merge_candidate_sets([
        fetch_candidates(query=q, vector=vectors[model][i], collection_ids=ids, mode=mode, candidates=n_candidates,
                         filters=filters, model=None if model == in_column else model)
        for model, ids in by_model.items()]) for i, q in enumerate(queries)]
    timings["candidates"] = _ms(t)

    t = time.perf_counter()
    ranked: list[RankedQuery] = []
    scores: list[dict] = []
    for cset in per_query:
        ordered, score, relevance = _rank_one(cset.candidates, mode, cset.idf_sum, fusion, bool(cset.identifiers))
        ranked.append(RankedQuery(ordered, relevance))
        scores.append(score)
    timings["fusion"] = _ms(t)

    if rerank_stage.enabled():
        t = time.perf_counter()
        fetch_texts([c for r in ranked for c in r.candidates[:tuning.RERANK_CANDIDATES]])
        for i, q in enumerate(queries):
            ranked[i], scores[i] = rerank_stage.rerank(q, ranked[i], scores[i])
        timings["rerank"] = _ms(t)

    top = _top_candidates(ranked, scores, k)
    returned = [c for c, _, _ in top]
    segments = []
    if rse is not None and eligible:
        t = time.perf_counter()
        chosen = choose_segments(ranked, preset=PRESETS[rse], eligible_collections=eligible, max_chars=max_chars,
                                 fill_with=returned)
        segments = read_segments(chosen, ranked, texts_for=returned)
        timings["rse"] = _ms(t)  # with the text of the returned chunks: the same query
    else:
        t = time.perf_counter()
        fetch_texts(returned)
        timings["text"] = _ms(t)
    chunks = [_scored(c, score, relevance) for c, score, relevance in top if c.text is not None]
    timings["total"] = _ms(t0)
    return SearchResult(query=asked, mode=mode, chunks=chunks, segments=segments, timings_ms=timings,
                        query_vectors=vectors)


def _top_candidates(ranked: list[RankedQuery], scores: list[dict], k: int) -> list[tuple[Candidate, float, float]]:
    """The k best candidates with their score and relevance (best over the queries)."""
    by_id: dict[int, Candidate] = {}
    relevance: dict[int, float] = {}
    for r in ranked:
        for c in r.candidates:
            by_id.setdefault(c.chunk_id, c)
            relevance[c.chunk_id] = max(relevance.get(c.chunk_id, 0.0), r.relevance.get(c.chunk_id, 0.0))
    if len(ranked) == 1:
        order = [(c.chunk_id, scores[0][c.chunk_id]) for c in ranked[0].candidates]
    else:  # several queries take turns
        order = round_robin([[c.chunk_id for c in r.candidates] for r in ranked], k=tuning.RRF_K,
                            tie_break=relevance)
    return [(by_id[chunk_id], float(score), relevance[chunk_id]) for chunk_id, score in order[:k]]


def _scored(c: Candidate, score: float, relevance: float) -> ScoredChunk:
    return ScoredChunk(chunk_id=c.chunk_id, document=DocumentRef(c.document_id, c.title, c.source),
                       chunk_index=c.chunk_index, text=c.text, start=c.start, end=c.end, score=score,
                       relevance=relevance, ranks={"vector": c.vector_rank, "keyword": c.keyword_rank})


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
