"""RSE against the database: value the chunks of the stretches a segment can come from, pick
segments with chat/retrieval/rse.py, then fetch the chosen segments' text, and the text of the chunks the
search returns, in one query.

A segment starts and ends on a retrieved chunk (every other chunk's value is negative) and spans
at most `max_length` chunks, so only the chunks between two hits of one document that are less
than `max_length` apart can be part of one. Those stretches ("windows") are all RSE values.

The chunks between two hits need no query: they are worth `-penalty` each, scaled by their
length, and a segment holding any of them holds the whole gap, so only the gap's total length
matters, and chunks tile their document, so that is the distance between the two hits' offsets.
Only the text of the segments picked is read, never that of the windows around them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection

from chat.retrieval.candidates import Candidate
from chat.retrieval.rse import RsePreset, SegmentChoice, adjust_for_length, best_segments, chunk_value, fit_to_budget


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


@dataclass
class _Chunk:
    id: int
    index: int
    start: int
    end: int
    text: str
    page: int | None


_CHUNKS_IN_RANGES = """
    SELECT r.n, c.id, c.chunk_index, c.start, c."end", c.text, c.page
    FROM unnest(%(n)s::int[], %(documents)s::bigint[], %(first)s::int[], %(end)s::int[]) AS r(n, doc, lo, hi)
    JOIN corpus_chunk c ON c.document_id = r.doc AND c.chunk_index >= r.lo AND c.chunk_index < r.hi
    UNION ALL
    SELECT -1, c.id, c.chunk_index, c.start, c."end", c.text, c.page
    FROM corpus_chunk c WHERE c.id = ANY(%(ids)s::bigint[])
    ORDER BY 1, 3"""


def _fetch_chunks(ranges: list[tuple[int, int, int]], ids: list[int]) -> tuple[list[list[_Chunk]], dict[int, str]]:
    """The chunks of each (document_id, first index, end index exclusive) range, and the text of
    the chunks `ids`, in one query."""
    with connection.cursor() as cursor:
        cursor.execute(_CHUNKS_IN_RANGES, {
            "n": list(range(len(ranges))), "documents": [r[0] for r in ranges], "first": [r[1] for r in ranges],
            "end": [r[2] for r in ranges], "ids": ids})
        rows = cursor.fetchall()
    chunks: list[list[_Chunk]] = [[] for _ in ranges]
    texts: dict[int, str] = {}
    for n, chunk_id, index, start, end, text, page in rows:
        if n < 0:
            texts[chunk_id] = text
        else:
            chunks[n].append(_Chunk(chunk_id, index, start, end, text, page))
    return chunks, texts


def fetch_texts(candidates: Sequence[Candidate]) -> None:
    """Fill in the text of candidates that have none, in one query (none when all have it). A
    chunk deleted since the search (its document re-ingested) keeps None."""
    missing = _missing(candidates, [])
    if missing:
        _fill(candidates, _fetch_chunks([], missing)[1])


def _missing(candidates: Sequence[Candidate], ranges: list[tuple[int, int, int]]) -> list[int]:
    """Ids of the candidates without text that lie in none of the ranges (those come with them)."""
    return list({c.chunk_id for c in candidates if c.text is None
                 and not any(d == c.document_id and lo <= c.chunk_index < hi for d, lo, hi in ranges)})


def _fill(candidates: Sequence[Candidate], texts: dict[int, str]) -> None:
    for c in candidates:
        if c.text is None:
            c.text = texts.get(c.chunk_id)


def _trust_rank(position: int, candidate: Candidate) -> int:
    """The rank a chunk's value decays by: its place in the fused order, or its place on the side
    that ranked it best when that is higher. Fusion pushes down a chunk only one side found (a
    vector side's first hit can land tenth), yet that side's top hits are its most trusted."""
    side_ranks = [rank - 1 for rank in (candidate.vector_rank, candidate.keyword_rank) if rank]
    return min([position, *side_ranks])


def extract_segments(queries: Sequence[RankedQuery], *, preset: RsePreset, eligible_collections: set[int],
                     texts_for: Sequence[Candidate] = (),
                     max_chars: int | None = None, fill_with: Sequence[Candidate] = ()) -> list[SegmentText]:
    """Segments for the ranked queries. RSE picks them by value; they are returned in the order of
    the best-ranked chunk each holds, so the answer to a factoid comes first even when a longer
    cluster elsewhere is worth more (a context cut to a budget keeps what matters most).
    `max_chars`: fit the segments to at most that many characters in all (_budgeted), the chunks of
    `fill_with` (the search's top hits, best first) that no segment holds taking part.
    The text of `texts_for` (the chunks a search returns) is read in the same query (fetch_texts)."""
    windows = _windows(queries, eligible_collections, preset.max_length)
    values = _values(queries, windows, preset) if windows else []
    choices = best_segments(values, max_length=preset.max_length, overall_max_length=preset.overall_max_length,
                            minimum_value=preset.minimum_value) if windows else []
    if max_chars is not None:
        choices = _budgeted(choices, values, windows, fill_with, max_chars)
    ranges = [(windows[c.document].document_id, windows[c.document].first + c.start,
               windows[c.document].first + c.end) for c in choices]
    missing = _missing(texts_for, ranges)
    if not ranges and not missing:
        return []
    fetched, texts = _fetch_chunks(ranges, missing)
    _fill(texts_for, texts | {chunk.id: chunk.text for chunks in fetched for chunk in chunks})
    hits = {(c.document_id, c.chunk_index): c for ranked in queries for c in ranked.candidates}
    segments = []
    for choice, (document_id, first, end), chunks in zip(choices, ranges, fetched, strict=True):
        # A segment begins and ends on a hit. Other chunks there now (the document was re-chunked
        # since the search), or a hole: there is no text of the chunks that were valued to give.
        if ([c.index for c in chunks] != list(range(first, end))
                or chunks[0].id != hits[(document_id, first)].chunk_id
                or chunks[-1].id != hits[(document_id, end - 1)].chunk_id):
            continue
        document = hits[(document_id, first)]
        segments.append(SegmentText(
            document_id=document_id, title=document.title, source=document.source,
            start=first, end=end, char_start=chunks[0].start, char_end=chunks[-1].end,
            # Chunks do not overlap and tile the document: together they are its text.
            text="".join(c.text for c in chunks), score=choice.score, page=chunks[0].page))
    segments.sort(key=lambda segment: _best_rank(queries, segment))
    return segments


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
    matter: extract_segments orders the segments by rank."""
    joined: list[SegmentChoice] = []
    for choice in sorted(choices, key=lambda c: (c.document, c.start)):
        last = joined[-1] if joined else None
        if last is not None and last.document == choice.document and last.end == choice.start:
            joined[-1] = SegmentChoice(document=last.document, start=last.start, end=choice.end,
                                       score=last.score + choice.score, query=last.query)
        else:
            joined.append(choice)
    return joined


def _best_rank(queries: Sequence[RankedQuery], segment: SegmentText) -> int:
    """Best (lowest) rank any query gave a chunk inside the segment."""
    best = 10**9
    for ranked in queries:
        for rank, c in enumerate(ranked.candidates):
            if c.document_id == segment.document_id and segment.start <= c.chunk_index < segment.end:
                best = min(best, rank)
                break
    return best
