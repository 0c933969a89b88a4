"""RSE against the database: build per-document chunk values from the ranked candidates, pick
segments with chat/rse.py, fetch their text in one query."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection

from chat.candidates import Candidate
from chat.rse import RsePreset, adjust_for_length, best_segments, chunk_value
from corpus.models import Document


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


def _chunk_ranges(queries: Sequence[RankedQuery], eligible: set[int]) -> dict[int, tuple[int, int]]:
    ranges: dict[int, tuple[int, int]] = {}
    for ranked in queries:
        for cand in ranked.candidates:
            if cand.collection_id not in eligible:
                continue
            lo, hi = ranges.get(cand.document_id, (cand.chunk_index, cand.chunk_index))
            ranges[cand.document_id] = (min(lo, cand.chunk_index), max(hi, cand.chunk_index))
    return ranges


def _chunk_lengths(ranges: dict[int, tuple[int, int]]) -> dict[int, list[tuple[int, int]]]:
    """document_id -> [(chunk_index, char length)] for the chunks between the first and last hit."""
    docs = list(ranges)
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT c.document_id, c.chunk_index, c."end" - c.start
               FROM unnest(%s::bigint[], %s::int[], %s::int[]) AS r(doc, lo, hi)
               JOIN corpus_chunk c ON c.document_id = r.doc AND c.chunk_index BETWEEN r.lo AND r.hi
               ORDER BY c.document_id, c.chunk_index""",
            [docs, [ranges[d][0] for d in docs], [ranges[d][1] for d in docs]])
        rows = cursor.fetchall()
    lengths: dict[int, list[tuple[int, int]]] = {}
    for document_id, chunk_index, length in rows:
        lengths.setdefault(document_id, []).append((chunk_index, length))
    return lengths


def extract_segments(queries: Sequence[RankedQuery], *, preset: RsePreset, eligible_collections: set[int],
                     order_by_rank: bool = True) -> list[SegmentText]:
    """Segments for the ranked queries. RSE picks them by value; they are returned in the order of
    the best-ranked chunk each holds, so the answer to a factoid comes first even when a longer
    cluster elsewhere is worth more (a context cut to a budget keeps what matters most)."""
    ranges = _chunk_ranges(queries, eligible_collections)
    if not ranges:
        return []
    lengths = _chunk_lengths(ranges)
    doc_ids = [d for d in ranges if d in lengths]
    all_lengths = [n for d in doc_ids for _, n in lengths[d]]
    reference = sum(all_lengths) / len(all_lengths) if all_lengths else 1.0

    values: list[list[list[float]]] = []
    for ranked in queries:
        position = {c.chunk_id: rank for rank, c in enumerate(ranked.candidates)}
        by_key = {(c.document_id, c.chunk_index): c for c in ranked.candidates}
        per_doc = []
        for d in doc_ids:
            doc_values = []
            for chunk_index, _length in lengths[d]:
                cand = by_key.get((d, chunk_index))
                if cand is None:
                    doc_values.append(chunk_value(0.0, None, penalty=preset.irrelevant_chunk_penalty,
                                                  decay_rate=preset.decay_rate))
                else:
                    doc_values.append(chunk_value(ranked.relevance.get(cand.chunk_id, 0.0), position[cand.chunk_id],
                                                  penalty=preset.irrelevant_chunk_penalty,
                                                  decay_rate=preset.decay_rate))
            per_doc.append(adjust_for_length(doc_values, [n for _, n in lengths[d]], reference))
        values.append(per_doc)

    choices = best_segments(values, max_length=preset.max_length, overall_max_length=preset.overall_max_length,
                            minimum_value=preset.minimum_value)
    if not choices:
        return []
    spans = []
    for choice in choices:
        d = doc_ids[choice.document]
        spans.append((d, lengths[d][choice.start][0], lengths[d][choice.end - 1][0] + 1, choice.score))
    if order_by_rank:
        spans.sort(key=lambda span: _best_rank(queries, span))
    return _fetch_texts(spans)


def _best_rank(queries: Sequence[RankedQuery], span: tuple[int, int, int, float]) -> int:
    """Best (lowest) rank any query gave a chunk inside the span."""
    document_id, start, end, _ = span
    best = 10**9
    for ranked in queries:
        for rank, c in enumerate(ranked.candidates):
            if c.document_id == document_id and start <= c.chunk_index < end:
                best = min(best, rank)
                break
    return best


def _fetch_texts(spans: list[tuple[int, int, int, float]]) -> list[SegmentText]:
    """One query for the text of every segment: the chunks of each range, concatenated in order
    (chunks do not overlap and tile the document, so this is the document text of the range)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT r.n, d.title, d.source, d.pages, min(c.start), max(c."end"),
                      string_agg(c.text, '' ORDER BY c.chunk_index)
               FROM unnest(%s::int[], %s::bigint[], %s::int[], %s::int[]) AS r(n, doc, lo, hi)
               JOIN corpus_chunk c ON c.document_id = r.doc AND c.chunk_index >= r.lo AND c.chunk_index < r.hi
               JOIN corpus_document d ON d.id = r.doc
               GROUP BY r.n, d.title, d.source, d.pages""",
            [list(range(len(spans))), [s[0] for s in spans], [s[1] for s in spans], [s[2] for s in spans]])
        rows = {row[0]: row[1:] for row in cursor.fetchall()}
    segments = []
    for n, (document_id, start, end, score) in enumerate(spans):
        title, source, pages, char_start, char_end, text = rows[n]
        if isinstance(pages, str):  # Django loads jsonb as text; JSONField decodes it
            pages = json.loads(pages)
        page = Document(pages=pages or []).page_at(char_start)
        segments.append(SegmentText(document_id=document_id, title=title, source=source, start=start, end=end,
                                    char_start=char_start, char_end=char_end, text=text, score=score, page=page))
    return segments
