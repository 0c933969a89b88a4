"""RSE against the database: fetch the stretches of documents a segment can come from (one
query), value their chunks from the ranked candidates, pick segments with chat/rse.py.

A segment starts and ends on a retrieved chunk (every other chunk's value is negative) and spans
at most `max_length` chunks, so only the chunks between two hits of one document that are less
than `max_length` apart can be part of one. Those stretches ("windows") are all RSE needs: their
chunks' lengths for the values, their text for the segments."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection

from chat.candidates import Candidate
from chat.rse import RsePreset, adjust_for_length, best_segments, chunk_value


@dataclass
class RankedQuery:
    """One query's results, best first, with each chunk's calibrated relevance."""

    candidates: list[Candidate]
    relevance: dict[int, float]  # chunk_id -> 0-1


@dataclass
class SegmentText:
    document_id: int
    title: str
    source: str
    start: int  # chunk_index, inclusive
    end: int  # exclusive
    char_start: int
    char_end: int
    text: str
    score: float
    page: int | None


@dataclass
class _WindowChunk:
    index: int
    start: int
    end: int
    text: str
    page: int | None


@dataclass
class _Window:
    document_id: int
    chunks: list[_WindowChunk]  # consecutive chunk indexes


def _window_bounds(queries: Sequence[RankedQuery], eligible: set[int], max_length: int) -> list[tuple[int, int, int]]:
    """(document_id, first, last chunk index) of each window: hits chained while the gap to the
    next hit leaves room for a segment holding both."""
    hits: dict[int, set[int]] = {}
    for ranked in queries:
        for cand in ranked.candidates:
            if cand.collection_id in eligible:
                hits.setdefault(cand.document_id, set()).add(cand.chunk_index)
    bounds = []
    for document_id, indexes in hits.items():
        ordered = sorted(indexes)
        first = last = ordered[0]
        for index in ordered[1:]:
            if index - last < max_length:
                last = index
            else:
                bounds.append((document_id, first, last))
                first = last = index
        bounds.append((document_id, first, last))
    return bounds


def _fetch_windows(bounds: list[tuple[int, int, int]]) -> list[_Window]:
    """The chunks of every window, in one query."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT r.n, c.chunk_index, c.start, c."end", c.text, c.page
               FROM unnest(%s::int[], %s::bigint[], %s::int[], %s::int[]) AS r(n, doc, lo, hi)
               JOIN corpus_chunk c ON c.document_id = r.doc AND c.chunk_index BETWEEN r.lo AND r.hi
               ORDER BY r.n, c.chunk_index""",
            [list(range(len(bounds))), [b[0] for b in bounds], [b[1] for b in bounds], [b[2] for b in bounds]])
        rows = cursor.fetchall()
    chunks: dict[int, list[_WindowChunk]] = {}
    for n, index, start, end, text, page in rows:
        chunks.setdefault(n, []).append(_WindowChunk(index, start, end, text, page))
    windows = []
    for n, (document_id, _, _) in enumerate(bounds):
        # A chunk missing from a window (its document re-chunked meanwhile) splits it: a segment's
        # text must be contiguous document text.
        run: list[_WindowChunk] = []
        for chunk in chunks.get(n, []):
            if run and chunk.index != run[-1].index + 1:
                windows.append(_Window(document_id, run))
                run = []
            run.append(chunk)
        if run:
            windows.append(_Window(document_id, run))
    return windows


def _values(queries: Sequence[RankedQuery], windows: list[_Window], preset: RsePreset) -> list[list[list[float]]]:
    """values[q][w][i]: the value of chunk i of window w for query q, scaled by chunk length."""
    lengths = [[c.end - c.start for c in w.chunks] for w in windows]
    all_lengths = [n for per_window in lengths for n in per_window]
    reference = max(sum(all_lengths) / len(all_lengths), 1.0)
    values = []
    for ranked in queries:
        rank = {(c.document_id, c.chunk_index): (_trust_rank(position, c), c.chunk_id)
                for position, c in enumerate(ranked.candidates)}
        per_window = []
        for w, window in enumerate(windows):
            window_values = []
            for chunk in window.chunks:
                found = rank.get((window.document_id, chunk.index))
                relevance = 0.0 if found is None else ranked.relevance.get(found[1], 0.0)
                window_values.append(chunk_value(relevance, None if found is None else found[0],
                                                 penalty=preset.irrelevant_chunk_penalty,
                                                 decay_rate=preset.decay_rate))
            per_window.append(adjust_for_length(window_values, lengths[w], reference))
        values.append(per_window)
    return values


def _trust_rank(position: int, candidate: Candidate) -> int:
    """The rank a chunk's value decays by: its place in the fused order, or its place on the side
    that ranked it best when that is higher. Fusion pushes down a chunk only one side found (a
    vector side's first hit can land tenth), yet that side's top hits are its most trusted."""
    side_ranks = [rank - 1 for rank in (candidate.vector_rank, candidate.keyword_rank) if rank]
    return min([position, *side_ranks])


def extract_segments(queries: Sequence[RankedQuery], *, preset: RsePreset, eligible_collections: set[int],
                     order_by_rank: bool = True) -> list[SegmentText]:
    """Segments for the ranked queries. RSE picks them by value; they are returned in the order of
    the best-ranked chunk each holds, so the answer to a factoid comes first even when a longer
    cluster elsewhere is worth more (a context cut to a budget keeps what matters most)."""
    bounds = _window_bounds(queries, eligible_collections, preset.max_length)
    if not bounds:
        return []
    windows = _fetch_windows(bounds)
    if not windows:
        return []
    choices = best_segments(_values(queries, windows, preset), max_length=preset.max_length,
                            overall_max_length=preset.overall_max_length, minimum_value=preset.minimum_value)
    documents = {c.document_id: c for ranked in queries for c in ranked.candidates}
    segments = []
    for choice in choices:
        window = windows[choice.document]
        chunks = window.chunks[choice.start:choice.end]
        document = documents[window.document_id]
        segments.append(SegmentText(
            document_id=window.document_id, title=document.title, source=document.source,
            start=chunks[0].index, end=chunks[-1].index + 1, char_start=chunks[0].start, char_end=chunks[-1].end,
            # Chunks do not overlap and tile the document: together they are its text.
            text="".join(c.text for c in chunks), score=choice.score, page=chunks[0].page))
    if order_by_rank:
        segments.sort(key=lambda segment: _best_rank(queries, segment))
    return segments


def _best_rank(queries: Sequence[RankedQuery], segment: SegmentText) -> int:
    """Best (lowest) rank any query gave a chunk inside the segment."""
    best = 10**9
    for ranked in queries:
        for rank, c in enumerate(ranked.candidates):
            if c.document_id == segment.document_id and segment.start <= c.chunk_index < segment.end:
                best = min(best, rank)
                break
    return best
