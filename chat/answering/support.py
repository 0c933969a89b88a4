"""Which sentence of a cited segment supports an answer's sentences, and the PDF page it is on.

One finder for everything that names it: when an answer is finished, pin_pages() stores the page
of each citation's first supporting sentence in the citation's `page` (the sources list, the API
and `/v1` show that), and the passage view highlights and scrolls to the same sentences, found
by the same function on the same segment text, so the page it names is the same.

Supporting sentences are found by words: each answer sentence citing [n] is matched to the
segment sentence holding most of its content words (an extractive answer quotes it; an LLM
answer usually reuses its words).
"""

from __future__ import annotations

import json
import re

from chat.answering.grounding import sentences_citing
from chat.answering.text import content_terms, sentence_breaks
from corpus.ingest.chunk_tables import table_blocks
from corpus.ingest.parse.base import page_number
from replicas.routing import read_connection

# An answer sentence is matched to the segment sentence holding at least this share of its words.
MIN_SUPPORT = 0.5

# Besides the end of a sentence (chat.answering.text.sentence_breaks, as the extractive answer splits
# its quotes), a blank line (paragraphs, PDF pages), the line of a list item or a heading, and the line
# of a Markdown table row: an extractive answer quotes one row (chat.answering.blocks), so the passage
# view highlights that row, not the whole table.
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:(?:[-*+•]|\d+[.)]|#{1,6})\s|\|))")


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of each sentence or list item of text[start:end], as offsets into `text`,
    without surrounding white space."""
    end = len(text) if end is None else end
    gaps = sorted([(m.start(), m.end()) for m in _BLOCK_BREAK.finditer(text, start, end)]
                  + sentence_breaks(text, start, end))
    spans, position = [], start
    for gap_start, gap_end in gaps:
        if gap_start < position:
            continue  # inside the gap just taken (a sentence's end and a blank line together)
        spans.append((position, gap_start))
        position = gap_end
    spans.append((position, end))
    trimmed = []
    for a, b in spans:
        piece = text[a:b]
        a += len(piece) - len(piece.lstrip())
        b -= len(piece) - len(piece.rstrip())
        if b > a:
            trimmed.append((a, b))
    return trimmed


def supporting_spans(segment: str, claims: list[str], *, base: int = 0) -> tuple[tuple[int, int], ...]:
    """The sentences of `segment` (a segment's text, starting at offset `base` of its document)
    that best support each claim (an answer sentence), when one holds at least MIN_SUPPORT of the
    claim's content words; as document offsets, in the order of the claims, each once."""
    # A table's header line and its rule support no claim: a quoted row names its columns, and the
    # header, holding only those names, would tie with the row of short cells it heads.
    blocks = table_blocks(segment)
    header_lines = {line for block in blocks for line in block.rows[:2]}
    # A row is quoted under its header ("Department: Training; 2026 budget (GBP): 40000; ..."), so its
    # line holds its columns' names too: else a row of short cells under long names holds too few of
    # the quote's words to support it.
    columns = {line: content_terms(segment[block.rows[0]:block.rows[1]]) for block in blocks for line in block.rows[2:]}
    spans = [(a, b) for a, b in sentence_spans(segment) if _line_start(segment, a) not in header_lines]
    terms = [content_terms(segment[a:b]) | columns.get(_line_start(segment, a), set()) for a, b in spans]
    found: dict[tuple[int, int], None] = {}
    for claim in claims:
        wanted = content_terms(claim)
        if not wanted:
            continue
        best, best_key = None, (0.0, 0.0)
        for span, span_terms in zip(spans, terms, strict=True):
            shared = len(wanted & span_terms)
            recall = shared / len(wanted)
            precision = shared / len(span_terms) if span_terms else 0.0
            # The first of equals wins: a sentence a manual repeats is cited where it first appears.
            if recall >= MIN_SUPPORT and (best is None or (recall, precision) > best_key):
                best, best_key = span, (recall, precision)
        if best is not None:
            found[(base + best[0], base + best[1])] = None
    return tuple(found)


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def support_for(segment: str, answer: str, n: int, *, base: int = 0, lead: str = "") -> tuple[tuple[int, int], ...]:
    """The sentences of `segment` supporting the sentences of `answer` that cite [n]; the one
    supporting `lead` (an extractive answer's best quote of that source: a citation's "lead")
    first, else in the answer's order."""
    return supporting_spans(segment, ([lead] if lead else []) + sentences_citing(answer, n), base=base)


# The cited segments of documents that have pages, with those pages, in one statement: an answer
# cites up to 8 sources, and most documents (everything but PDFs) have no pages to pin.
_PAGED_SEGMENTS = """
    SELECT r.i, d.pages, substr(d.text, r.lo + 1, r.hi - r.lo)
    FROM unnest(%s::int[], %s::bigint[], %s::int[], %s::int[]) AS r(i, doc, lo, hi)
    JOIN corpus_document d ON d.id = r.doc
    WHERE jsonb_array_length(d.pages) > 0"""


def pin_pages(citations: list[dict], answer: str) -> list[dict]:
    """Copies of `citations` whose `page` is the PDF page of the first sentence of the segment
    that supports the answer (found as the passage view finds it); a citation without a
    supporting sentence keeps the page its segment starts on, one of a document without pages
    keeps None. The segment is read from the document as it is now (a citation's `text` may have
    been cut to the answer's budget), all of them in one query."""
    pinned = [dict(citation) for citation in citations]
    wanted = [(i, c["document"]["id"], c["char_start"], c["char_end"]) for i, c in enumerate(pinned)
              if (c.get("document") or {}).get("id") is not None and c.get("char_start") is not None
              and c.get("char_end") is not None and c["char_end"] > c["char_start"]]
    if not wanted:
        return pinned
    with read_connection().cursor() as cursor:
        cursor.execute(_PAGED_SEGMENTS, [[w[0] for w in wanted], [w[1] for w in wanted], [w[2] for w in wanted],
                                         [w[3] for w in wanted]])
        rows = cursor.fetchall()
    for i, pages, segment in rows:
        citation = pinned[i]
        if isinstance(pages, str):  # a raw cursor may hand jsonb over undecoded
            pages = json.loads(pages)
        support = support_for(segment or "", answer, citation["n"], base=citation["char_start"],
                              lead=citation.get("lead") or "")
        if support:
            citation["page"] = page_number(pages, support[0][0])
    return pinned
