"""Relevant segment extraction (after dsRAG): turn per-chunk relevance into contiguous segments.

Pure: it chooses chunk ranges, and chat/retrieval/segment_text.py reads their text. A chunk's
value is relevance x exp(-rank / decay) - irrelevant_chunk_penalty, scaled by its length relative
to a reference length (so a long irrelevant chunk costs more than a short one and a long
relevant chunk earns more). A segment's value is the sum of its chunks' values; segments are
picked greedily, best first, as a constrained maximum-sum subarray problem: at most `max_length`
chunks each, at most `overall_max_length` chunks in all, value at least `minimum_value`, no
overlap, never across a document boundary. With several queries the picks go round-robin over
the queries, so every query gets its best segment early.

A segment starts and ends on a retrieved chunk (every other chunk's value is negative) and spans
at most `max_length` chunks, so only the chunks between two hits of one document that are less
than `max_length` apart can be part of one. Those stretches ("windows") are all RSE values. The
chunks between two hits are worth `-penalty` each, scaled by their length, and a segment holding
any of them holds the whole gap, so only the gap's total length matters; chunks tile their
document, so that is the distance between the two hits' offsets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from chat.retrieval.types import Candidate, RankedQuery

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


@dataclass(frozen=True)
class SegmentRange:
    """A chosen segment: chunks `start` to `end` (exclusive) of one document, and its value."""

    document_id: int
    start: int
    end: int
    score: float


def choose_segments(queries: Sequence[RankedQuery], *, preset: RsePreset, eligible_collections: set[int],
                    max_chars: int | None = None, fill_with: Sequence[Candidate] = ()) -> list[SegmentRange]:
    """The segments for the ranked queries, in the order of the best-ranked chunk each holds.

    RSE picks them by value; ordering them by rank puts the answer to a factoid first even when a
    longer cluster elsewhere is worth more (a context cut to a budget keeps what matters most).
    Only chunks of `eligible_collections` are segmented. `max_chars`: fit the segments to at most
    that many characters in all (_budgeted), the chunks of `fill_with` (the search's top hits,
    best first) that no segment holds taking part."""
    windows = _windows(queries, eligible_collections, preset.max_length)
    if not windows:
        return []
    values = _values(queries, windows, preset)
    choices = best_segments(values, max_length=preset.max_length, overall_max_length=preset.overall_max_length,
                            minimum_value=preset.minimum_value)
    if max_chars is not None:
        choices = _budgeted(choices, values, windows, fill_with, max_chars)
    ranges = [SegmentRange(windows[c.document].document_id, windows[c.document].first + c.start,
                           windows[c.document].first + c.end, c.score) for c in choices]
    return sorted(ranges, key=lambda r: _best_rank(queries, r))


@dataclass
class _Window:
    document_id: int
    first: int  # chunk index of its first chunk (a hit)
    lengths: list[float]  # characters of each chunk first, first + 1, ... (a gap's chunks share its length)


def _windows(queries: Sequence[RankedQuery], eligible: set[int], max_length: int) -> list[_Window]:
    """Each window: hits of one document chained while the gap to the next hit leaves room for a
    segment holding both."""
    hits: dict[int, dict[int, Candidate]] = {}
    for ranked in queries:
        for cand in ranked.candidates:
            if cand.collection_id in eligible:
                hits.setdefault(cand.document_id, {}).setdefault(cand.chunk_index, cand)
    windows = []
    for document_id, by_index in hits.items():
        ordered = [by_index[i] for i in sorted(by_index)]
        window = _Window(document_id, ordered[0].chunk_index, [ordered[0].end - ordered[0].start])
        for previous, hit in zip(ordered, ordered[1:], strict=False):
            gap = hit.chunk_index - previous.chunk_index - 1
            if gap + 1 < max_length:
                if gap:
                    window.lengths.extend([max(hit.start - previous.end, 0) / gap] * gap)
            else:
                windows.append(window)
                window = _Window(document_id, hit.chunk_index, [])
            window.lengths.append(hit.end - hit.start)
        windows.append(window)
    return windows


def _values(queries: Sequence[RankedQuery], windows: list[_Window], preset: RsePreset) -> list[list[list[float]]]:
    """values[q][w][i]: the value of chunk i of window w for query q, scaled by chunk length."""
    all_lengths = [n for w in windows for n in w.lengths]
    reference = max(sum(all_lengths) / len(all_lengths), 1.0)
    values = []
    for ranked in queries:
        rank = {(c.document_id, c.chunk_index): (_trust_rank(position, c), c.chunk_id)
                for position, c in enumerate(ranked.candidates)}
        per_window = []
        for window in windows:
            window_values = []
            for offset in range(len(window.lengths)):
                found = rank.get((window.document_id, window.first + offset))
                relevance = 0.0 if found is None else ranked.relevance.get(found[1], 0.0)
                window_values.append(chunk_value(relevance, None if found is None else found[0],
                                                 penalty=preset.irrelevant_chunk_penalty,
                                                 decay_rate=preset.decay_rate))
            per_window.append(adjust_for_length(window_values, window.lengths, reference))
        values.append(per_window)
    return values


def _trust_rank(position: int, candidate: Candidate) -> int:
    """The rank a chunk's value decays by: its place in the fused order, or its place on the side
    that ranked it best when that is higher. Fusion pushes down a chunk only one side found (a
    vector side's first hit can land tenth), yet that side's top hits are its most trusted."""
    side_ranks = [rank - 1 for rank in (candidate.vector_rank, candidate.keyword_rank) if rank]
    return min([position, *side_ranks])


def _fit(choices: list[SegmentChoice], values: list[list[list[float]]], windows: list[_Window],
         max_chars: int) -> list[SegmentChoice]:
    """The choices trimmed to `max_chars`, a chunk valued by the query that values it most. Gap
    chunks count at their gap's mean length, but a trimmed segment still begins and ends on a hit,
    so it holds a gap whole or not at all and its text fits the budget exactly."""
    chunk_values = [[max(per_query[c.document][i] for per_query in values) for i in range(c.start, c.end)]
                    for c in choices]
    lengths = [windows[c.document].lengths[c.start:c.end] for c in choices]
    fitted = []
    for choice, kept, chunk_value_list in zip(choices, fit_to_budget(chunk_values, lengths, max_chars), chunk_values,
                                              strict=True):
        start, end = kept
        if start < end:
            fitted.append(SegmentChoice(document=choice.document, start=choice.start + start,
                                        end=choice.start + end, score=sum(chunk_value_list[start:end]),
                                        query=choice.query))
    return fitted


def _budgeted(choices: list[SegmentChoice], values: list[list[list[float]]], windows: list[_Window],
              top_hits: Sequence[Candidate], max_chars: int) -> list[SegmentChoice]:
    """RSE's choices fitted to `max_chars` characters, with the top hits they leave out.

    RSE keeps a chunk only inside a segment worth `minimum_value`, so a lone hit (the one chunk of
    a page that states the fact) rarely makes it, and what it leaves out is what a plain top-k
    context would have held. Such a hit worth something (value > 0) competes for the budget as a
    segment of one chunk, against the segments' ends, by value per character (_fit); then the room
    left goes to the top hits none of the fitted segments holds, best first, while each fits.
    Segments left adjoining are joined."""
    lone = [_one_chunk(values, place) for place in _outside(choices, windows, top_hits)
            if _best_value(values, place)[0] > 0]
    fitted = _fit(choices + lone, values, windows, max_chars)
    room = max_chars - sum(sum(windows[c.document].lengths[c.start:c.end]) for c in fitted)
    for place in _outside(fitted, windows, top_hits):  # a hit trimmed off a segment's end too
        length = windows[place[0]].lengths[place[1]]
        if length <= room:
            fitted.append(_one_chunk(values, place))
            room -= length
    return _join_adjoining(fitted)


def _outside(choices: list[SegmentChoice], windows: list[_Window],
             hits: Sequence[Candidate]) -> list[tuple[int, int]]:
    """(window, offset) of each of `hits`, in order, that no choice holds; hits of collections RSE
    does not segment have no window and are left out."""
    place = {(w.document_id, w.first + i): (n, i) for n, w in enumerate(windows) for i in range(len(w.lengths))}
    taken = {(c.document, i) for c in choices for i in range(c.start, c.end)}
    found = []
    for hit in hits:
        where = place.get((hit.document_id, hit.chunk_index))
        if where is not None and where not in taken:
            found.append(where)
            taken.add(where)
    return found


def _best_value(values: list[list[list[float]]], place: tuple[int, int]) -> tuple[float, int]:
    """The chunk's value for the query that values it most, and that query."""
    window, i = place
    return max((per_query[window][i], query) for query, per_query in enumerate(values))


def _one_chunk(values: list[list[list[float]]], place: tuple[int, int]) -> SegmentChoice:
    value, query = _best_value(values, place)
    return SegmentChoice(document=place[0], start=place[1], end=place[1] + 1, score=value, query=query)


def _join_adjoining(choices: list[SegmentChoice]) -> list[SegmentChoice]:
    """Choices of one window that meet (one ends where the next starts) as one. The order does not
    matter: choose_segments orders the segments by rank."""
    joined: list[SegmentChoice] = []
    for choice in sorted(choices, key=lambda c: (c.document, c.start)):
        last = joined[-1] if joined else None
        if last is not None and last.document == choice.document and last.end == choice.start:
            joined[-1] = SegmentChoice(document=last.document, start=last.start, end=choice.end,
                                       score=last.score + choice.score, query=last.query)
        else:
            joined.append(choice)
    return joined


def _best_rank(queries: Sequence[RankedQuery], segment: SegmentRange) -> int:
    """Best (lowest) rank any query gave a chunk inside the segment."""
    best = 10**9
    for ranked in queries:
        for rank, c in enumerate(ranked.candidates):
            if c.document_id == segment.document_id and segment.start <= c.chunk_index < segment.end:
                best = min(best, rank)
                break
    return best
