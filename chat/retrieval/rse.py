"""Relevant segment extraction (after dsRAG): turn per-chunk relevance into contiguous segments.

Pure. A chunk's value is relevance x exp(-rank / decay) - irrelevant_chunk_penalty, optionally
scaled by its length relative to a reference length (so a long irrelevant chunk costs more than a
short one and a long relevant chunk earns more). A segment's value is the sum of its chunks'
values; segments are picked greedily, best first, as a constrained maximum-sum subarray problem:
at most `max_length` chunks each, at most `overall_max_length` chunks in all, value at least
`minimum_value`, no overlap, never across a document boundary. With several queries the picks
go round-robin over the queries, so every query gets its best segment early.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

_EPSILON = 1e-9


@dataclass(frozen=True)
class RsePreset:
    max_length: int  # chunks per segment
    overall_max_length: int  # chunks in all segments together
    minimum_value: float
    irrelevant_chunk_penalty: float
    decay_rate: float


PRESETS: dict[str, RsePreset] = {
    "balanced": RsePreset(15, 30, 0.5, 0.18, 30),
    "precision": RsePreset(15, 30, 0.7, 0.2, 30),
    "find_all": RsePreset(40, 200, 0.4, 0.18, 200),
}


@dataclass(frozen=True)
class SegmentChoice:
    document: int  # position of the document in the input lists
    start: int  # chunk position within that document's list, inclusive
    end: int  # exclusive
    score: float
    query: int  # which query's values chose it


def chunk_value(relevance: float, rank: int | None, *, penalty: float, decay_rate: float) -> float:
    """Value of one chunk for one query; rank is 0-based in that query's results, None when the
    chunk was not retrieved (then its relevance counts as 0)."""
    if rank is None:
        return -penalty
    return relevance * math.exp(-rank / decay_rate) - penalty


def adjust_for_length(values: Sequence[float], lengths: Sequence[int], reference_length: float) -> list[float]:
    """Scale each value by chunk length / reference length (chunkers make chunks of unequal size)."""
    if reference_length <= 0:
        raise ValueError("reference_length must be positive")
    return [v * (n / reference_length) for v, n in zip(values, lengths, strict=True)]


def _best_in_document(values: Sequence[float], prefix: Sequence[float], taken: list[tuple[int, int]],
                      max_length: int, budget: int) -> tuple[float, int, int] | None:
    best: tuple[float, int, int] | None = None
    n = len(values)
    for start in range(n):
        if values[start] < 0:  # a segment never starts or ends on an irrelevant chunk
            continue
        for end in range(start + 1, min(start + max_length, n) + 1):
            if end - start > budget:
                break
            if values[end - 1] < 0:
                continue
            if any(start < t_end and end > t_start for t_start, t_end in taken):
                # Overlap only grows with `end`, so no longer segment from this start fits either.
                break
            value = prefix[end] - prefix[start]
            # The tolerance keeps float noise in the prefix sums from deciding ties: the earlier wins.
            if best is None or value > best[0] + _EPSILON:
                best = (value, start, end)
    return best


def best_segments(values: Sequence[Sequence[Sequence[float]]], *, max_length: int, overall_max_length: int,
                  minimum_value: float) -> list[SegmentChoice]:
    """Pick segments. values[q][d][i] is the value of chunk i of document d for query q (every query
    has the same documents and chunk counts). Returns the segments in the order they were chosen."""
    if not values:
        return []
    n_docs = len(values[0])
    if any(len(per_query) != n_docs for per_query in values):
        raise ValueError("every query needs values for the same documents")
    prefixes = []
    for per_query in values:
        doc_prefixes = []
        for doc_values in per_query:
            prefix = [0.0]
            for v in doc_values:
                prefix.append(prefix[-1] + v)
            doc_prefixes.append(prefix)
        prefixes.append(doc_prefixes)

    taken: list[list[tuple[int, int]]] = [[] for _ in range(n_docs)]
    chosen: list[SegmentChoice] = []
    used = 0
    exhausted: set[int] = set()
    # (query, document) -> its best segment as last computed. It stays the best until a segment is
    # taken from that document or the remaining budget gets shorter than it: the other candidates
    # can only have been removed, never added. Saves rescanning every document on every pick.
    cache: dict[tuple[int, int], tuple[float, int, int] | None] = {}
    query = 0
    while used < overall_max_length and len(exhausted) < len(values):
        while query in exhausted:
            query = (query + 1) % len(values)
        best: SegmentChoice | None = None
        budget = overall_max_length - used
        for d in range(n_docs):
            found = cache.get((query, d), False)
            if found is False or (found is not None and found[2] - found[1] > budget):
                found = _best_in_document(values[query][d], prefixes[query][d], taken[d], max_length, budget)
                cache[(query, d)] = found
            if found is not None and (best is None or found[0] > best.score + _EPSILON):
                best = SegmentChoice(document=d, start=found[1], end=found[2], score=found[0], query=query)
        if best is None or best.score < minimum_value:
            exhausted.add(query)
        else:
            chosen.append(best)
            taken[best.document].append((best.start, best.end))
            used += best.end - best.start
            for q in range(len(values)):
                cache.pop((q, best.document), None)
        query = (query + 1) % len(values)
    return chosen


def fit_to_budget(values: Sequence[Sequence[float]], lengths: Sequence[Sequence[float]],
                  budget: float) -> list[tuple[int, int]]:
    """Trim chosen segments to fit `budget` characters in all. values[s][i] and lengths[s][i] are
    chunk i of segment s; returns each segment's kept (start, end), end exclusive (start == end:
    dropped).

    A segment's ends go first, the least valuable per character first, because a context cut at a
    budget would otherwise lose whole segments after a long first one, and the chunk that made
    a segment worth picking sits in its middle as often as at its start. An end left on a chunk
    worth nothing (value <= 0: irrelevant, or not retrieved) is trimmed too: it only costs
    characters, and so every kept segment still begins and ends on a retrieved chunk."""
    if len(values) != len(lengths) or any(len(v) != len(n) for v, n in zip(values, lengths, strict=True)):
        raise ValueError("values and lengths must have the same shape")
    if budget < 0:
        raise ValueError("budget must not be negative")
    spans = [[0, len(v)] for v in values]
    total = sum(sum(n) for n in lengths)

    def density(s: int, i: int) -> float:
        return values[s][i] / max(lengths[s][i], 1.0)

    while total > budget:
        ends = []
        for s, (start, end) in enumerate(spans):
            if start < end:
                # Ties go to the later segment and to the tail: the earlier text is the better ranked.
                ends.append((density(s, end - 1), -s, 0, s))
                ends.append((density(s, start), -s, 1, s))
        _, _, head, s = min(ends)
        if head:
            total -= lengths[s][spans[s][0]]
            spans[s][0] += 1
        else:
            spans[s][1] -= 1
            total -= lengths[s][spans[s][1]]
    for s, span in enumerate(spans):
        while span[0] < span[1] and values[s][span[1] - 1] <= 0:
            span[1] -= 1
        while span[0] < span[1] and values[s][span[0]] <= 0:
            span[0] += 1
    return [(start, end) for start, end in spans]
