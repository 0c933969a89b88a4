"""The text of the chosen segments, and of the chunks a search returns, read in one query.

chat/retrieval/rse.py chooses chunk ranges without reading any text; this reads the text of those
ranges only (never that of the windows around them) and of the returned chunks that lie in none.
Chunks do not overlap and tile their document, so a range's chunks joined are the document's text
from the first chunk's start to the last one's end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chat.retrieval.rse import SegmentRange
from chat.retrieval.types import Candidate, DocumentRef, RankedQuery, Segment
from replicas.routing import read_connection


@dataclass(frozen=True)
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


def read_segments(ranges: Sequence[SegmentRange], queries: Sequence[RankedQuery], *,
                  texts_for: Sequence[Candidate] = ()) -> list[Segment]:
    """The segments of `ranges` (RSE's choice for `queries`) with their text, in the same order.
    The text of `texts_for` (the chunks a search returns) is read in the same query. A range whose
    chunks changed since the search (its document re-chunked) is left out: there is no text of
    the chunks that were valued to give."""
    bounds = [(r.document_id, r.start, r.end) for r in ranges]
    missing = _missing(texts_for, bounds)
    if not bounds and not missing:
        return []
    fetched, texts = _fetch_chunks(bounds, missing)
    _fill(texts_for, texts | {chunk.id: chunk.text for chunks in fetched for chunk in chunks})
    hits = {(c.document_id, c.chunk_index): c for ranked in queries for c in ranked.candidates}
    segments = []
    for chosen, chunks in zip(ranges, fetched, strict=True):
        # A segment begins and ends on a hit: other chunks there now, or a hole, and it is stale.
        if ([c.index for c in chunks] != list(range(chosen.start, chosen.end))
                or chunks[0].id != hits[(chosen.document_id, chosen.start)].chunk_id
                or chunks[-1].id != hits[(chosen.document_id, chosen.end - 1)].chunk_id):
            continue
        first = hits[(chosen.document_id, chosen.start)]
        segments.append(Segment(
            document=DocumentRef(chosen.document_id, first.title, first.source), start=chosen.start, end=chosen.end,
            char_start=chunks[0].start, char_end=chunks[-1].end, text="".join(c.text for c in chunks),
            score=chosen.score, page=chunks[0].page))
    return segments


def fetch_texts(candidates: Sequence[Candidate]) -> None:
    """Fill in the text of candidates that have none, in one query (none when all have it). A
    chunk deleted since the search (its document re-ingested) keeps None."""
    missing = _missing(candidates, [])
    if missing:
        _fill(candidates, _fetch_chunks([], missing)[1])


def _fetch_chunks(ranges: list[tuple[int, int, int]], ids: list[int]) -> tuple[list[list[_Chunk]], dict[int, str]]:
    """The chunks of each (document_id, first index, end index exclusive) range, and the text of
    the chunks `ids`, in one query."""
    with read_connection().cursor() as cursor:
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


def _missing(candidates: Sequence[Candidate], ranges: list[tuple[int, int, int]]) -> list[int]:
    """Ids of the candidates without text that lie in none of the ranges (those come with them)."""
    return list({c.chunk_id for c in candidates if c.text is None
                 and not any(d == c.document_id and lo <= c.chunk_index < hi for d, lo, hi in ranges)})


def _fill(candidates: Sequence[Candidate], texts: dict[int, str]) -> None:
    for c in candidates:
        if c.text is None:
            c.text = texts.get(c.chunk_id)
