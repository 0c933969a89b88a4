"""The cited passage in its document: the document with the cited segment shown lightly and,
inside it, the sentence(s) that support the answer's sentences citing it highlighted (the page
scrolls to the first one); PDF page breaks marked; and the chunk relevance values that explain why
the segment was chosen.

Supporting sentences are found by chat.answering.support, the finder that gave the citation its
page when the answer was finished. Markdown documents are rendered as Markdown with the highlight
inserted line by line after each line's list or heading markup, so lists stay lists, and turned
into <mark> elements around text only (never inside a tag, such as a link's title).
"""

from __future__ import annotations

import logging
import re
import secrets
from dataclasses import dataclass

from django.db.models import Max, Min
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from pgvector.django import CosineDistance

from accounts.quotas import UserQuota
from chat.answering.support import support_for
from chat.markdown import TAG_OR_TEXT, render_markdown
from chat.retrieval.query_batching import embed_queries
from corpus.ingest.chunk_fences import fence_blocks, fence_ends, refenced
from corpus.models import Chunk, Document

logger = logging.getLogger(__name__)

MARKDOWN_TYPES = {"text/markdown", "text/x-markdown"}
_LINE_MARKUP = re.compile(r"[ \t]*(?:(?:[-*+•]|\d+[.)]|#{1,6}|>)[ \t]+)*")


@dataclass(frozen=True)
class Highlight:
    """What the passage view shows: offsets are into the document text, `end`s exclusive."""

    segment: tuple[int, int]
    # The supporting sentences, in the order of the answer's sentences they support: the first
    # supports the answer's first sentence citing the segment, and is where the page scrolls.
    support: tuple[tuple[int, int], ...]

    @property
    def focus(self) -> int:
        """Where the reader's eye should land: the first supporting sentence, else the segment."""
        return self.support[0][0] if self.support else self.segment[0]


def is_markdown(document: Document) -> bool:
    return document.media_type in MARKDOWN_TYPES or document.source.lower().endswith((".md", ".markdown"))


def segment_chars(document: Document, citation: dict) -> tuple[int, int]:
    """Character range of the cited chunks [start, end) in the document's current text."""
    bounds = (Chunk.objects.filter(document=document, chunk_index__gte=citation["start"],
                                   chunk_index__lt=citation["end"])
              .aggregate(first=Min("start"), last=Max("end")))
    if bounds["first"] is not None:
        return bounds["first"], bounds["last"]
    # The chunks are gone (document rebuilt): fall back to the offsets stored with the answer.
    start = citation.get("char_start") or 0
    return start, citation.get("char_end") or start


def highlight_for(document: Document, citation: dict, answer: str) -> Highlight:
    """The segment of `citation` and the sentences in it that support the answer's sentences citing it."""
    start, end = segment = segment_chars(document, citation)
    # The same finder on the same segment text as chat.answering.support.pin_pages, which stored
    # the citation's page: the page named here is that page.
    return Highlight(segment=segment, support=support_for(document.text[start:end], answer, citation["n"], base=start,
                                                          lead=citation.get("lead") or ""))


# The passage pages render a window of the document, not all of it (a 600,000-character document
# rendered whole took ~0.3 s of CPU a request): this much text on each side of the passage, and at
# most PART_CHARS in all; the rest is paged in parts of PART_CHARS (?part=N), cut at line starts.
CONTEXT_CHARS = 10_000
PART_CHARS = 40_000
_LINE_LOOKBACK = 2_000  # how far back a cut looks for a line start


class PassageQuota(UserQuota):
    """Passage pages (an answer's citation, a search result's passage) per user."""

    scope = "passage_page"
    rate = "120/min"


@dataclass(frozen=True)
class Window:
    """The characters [start, end) of a document that a passage page renders; `earlier` and
    `later` are the parts (?part=N) before and after it, None at either end of the document."""

    start: int
    end: int
    earlier: int | None
    later: int | None


def _line_start(text: str, offset: int) -> int:
    """`offset` moved back to the start of its line (if one starts within _LINE_LOOKBACK)."""
    if offset <= 0 or offset >= len(text):
        return max(0, min(offset, len(text)))
    newline = text.rfind("\n", max(0, offset - _LINE_LOOKBACK), offset)
    return offset if newline < 0 else newline + 1


def parts(text: str) -> int:
    """How many parts of PART_CHARS the document has (at least one)."""
    return max(1, -(-len(text) // PART_CHARS))


def window_for(text: str, highlight: Highlight, part: int | None = None) -> Window:
    """Part `part` of the document (0-based, clamped), or without one the window around the
    highlight: CONTEXT_CHARS before the segment and after it, at most PART_CHARS from the focus."""
    if part is not None:
        part = max(0, min(part, parts(text) - 1))
        start, end = _line_start(text, part * PART_CHARS), _line_start(text, (part + 1) * PART_CHARS)
    else:
        seg_start, seg_end = highlight.segment
        start = max(0, min(seg_start, highlight.focus) - CONTEXT_CHARS)
        end = max(seg_end, highlight.focus) + CONTEXT_CHARS
        if end - start > PART_CHARS:
            start = max(0, highlight.focus - CONTEXT_CHARS)
            end = start + PART_CHARS
        start, end = _line_start(text, start), _line_start(text, min(end, len(text)))
    return Window(start=start, end=end, earlier=(start - 1) // PART_CHARS if start > 0 else None,
                  later=end // PART_CHARS if end < len(text) else None)


def _within(highlight: Highlight, window: Window) -> Highlight | None:
    """The highlight cut to the window, its offsets made relative to it; None if none of it is in."""
    def cut(a: int, b: int) -> tuple[int, int] | None:
        a, b = max(a, window.start), min(b, window.end)
        return (a - window.start, b - window.start) if a < b else None

    segment = cut(*highlight.segment)
    if segment is None:
        return None
    support = tuple(span for span in (cut(a, b) for a, b in highlight.support) if span)
    return Highlight(segment=segment, support=support)


def highlighted_document(document: Document, highlight: Highlight, window: Window | None = None) -> SafeString:
    """The document, or its `window`, as HTML: the segment in <mark class="passage segment">,
    supporting sentences in <mark class="passage support">, the first focus carrying
    id="passage"; PDF page breaks shown (numbered as in the whole document)."""
    text = document.text
    window = window or Window(0, len(text), None, None)
    shown, inside = text[window.start:window.end], _within(highlight, window)
    if is_markdown(document):
        return _markdown_html(shown, inside) if inside else format_html(
            '<div class="doc markdown">{}</div>', render_markdown(shown))
    pages = [(number, offset - window.start) for number, offset in enumerate(document.pages or [], start=1)
             if number > 1 and window.start <= offset <= window.end]
    return _plain_html(shown, inside, pages)


def _plain_html(text: str, highlight: Highlight | None, pages: list[tuple[int, int]]) -> SafeString:
    # Every tag opens and closes at an offset; at one offset: closings, then a page break, then openings.
    focus_id = ' id="passage"'
    events: list[tuple[int, int, str]] = []  # (offset, 0 close | 1 page break | 2 open, html)
    if highlight is not None:
        seg_start, seg_end = highlight.segment
        segment_tag = f'<mark class="passage segment"{"" if highlight.support else focus_id}>'
        events += [(seg_start, 2, segment_tag), (seg_end, 0, "</mark>")]
        for i, (a, b) in enumerate(highlight.support):
            events += [(a, 2, f'<mark class="passage support"{focus_id if i == 0 else ""}>'), (b, 0, "</mark>")]
    for number, offset in pages:
        events.append((offset, 1, f'<span class="page-break" id="page-{number}" role="separator">'
                                  f"Page {number}</span>"))
    events.sort(key=lambda e: (e[0], e[1]))
    html, position = [], 0
    for offset, _kind, tag in events:
        html.append(escape(text[position:offset]))
        html.append(tag)
        position = offset
    html.append(escape(text[position:]))
    return mark_safe(f'<pre class="doc plain">{"".join(html)}</pre>')  # noqa: S308 — text escaped above


def _markdown_html(text: str, highlight: Highlight) -> SafeString:
    seg_start, seg_end = highlight.segment
    nonce = secrets.token_hex(6)
    focus, opening, closing = f"zqmk{nonce}f", f"zqmk{nonce}o", f"zqmk{nonce}c"
    segment = text[seg_start:seg_end]
    # Markers go in line by line, after each line's list, heading or quote markup, so that the
    # Markdown keeps its structure; after rendering they become <mark> elements around text.
    inserts: list[tuple[int, str]] = []
    for number, (a, b) in enumerate(highlight.support):
        line_start = a
        while line_start < b:
            line_end = text.find("\n", line_start, b)
            line_end = b if line_end < 0 else line_end
            content = max(_LINE_MARKUP.match(text, line_start).end(), a)
            if text[content:line_end].strip():
                marker = focus if number == 0 and line_start == a else opening
                inserts += [(content - seg_start, marker), (line_end - seg_start, closing)]
            line_start = line_end + 1
    for offset, marker in sorted(inserts, key=lambda item: item[0], reverse=True):
        segment = segment[:offset] + marker + segment[offset:]
    # Each of the three parts is rendered alone: a code block the segment cuts (corpus.ingest.chunk_fences:
    # one longer than a chunk) is closed and opened again where it is cut, so code stays code.
    fences = fence_blocks(text)
    before, after = fence_ends(text, seg_start, seg_end, fences)
    body = _marks_on_text(str(render_markdown(before + segment + after)), re.compile(f"(zqmk{nonce}[foc])"))
    segment_id = "" if 'id="passage"' in body else ' id="passage"'
    return format_html('<div class="doc markdown">{}<div class="passage segment"{}>{}</div>{}</div>',
                       render_markdown(refenced(text, 0, seg_start, fences)),
                       mark_safe(segment_id),  # noqa: S308 — a constant
                       mark_safe(body), render_markdown(refenced(text, seg_end, len(text), fences)))  # noqa: S308 — sanitised Markdown


def _marks_on_text(html: str, marker: re.Pattern) -> str:
    """Sanitized HTML with highlight markers turned into <mark> elements around text only.

    A marker may have landed inside a tag (a link's title or URL, where the sentence starts or
    ends): it is taken out there, and only says where highlighting starts or stops. Every <mark>
    opens and closes within one piece of text, so it can never break a tag or an attribute; the
    first after the focus marker carries id="passage"."""
    out: list[str] = []
    on = focus = False
    for part in TAG_OR_TEXT.split(html):
        pieces = marker.split(part)
        if part.startswith("<"):
            out.append("".join(pieces[::2]))
            switches = pieces[1::2]
        else:
            switches = []
            for i, piece in enumerate(pieces):
                if i % 2:
                    on, focus = _switched(piece, on, focus)
                elif on and piece.strip():
                    out.append(f"{_FOCUS_MARK if focus else _MARK}{piece}</mark>")
                    focus = False
                else:
                    out.append(piece)
        for switch in switches:
            on, focus = _switched(switch, on, focus)
    return "".join(out)


_MARK = '<mark class="passage support">'
_FOCUS_MARK = '<mark class="passage support" id="passage">'


def _switched(marker: str, on: bool, focus: bool) -> tuple[bool, bool]:
    """(highlighting, focus pending) after `marker`: f opens with the focus, o opens, c closes."""
    kind = marker[-1]
    return kind != "c", focus or kind == "f"


def chunk_similarities(document: Document, query: str) -> list[float | None]:
    """Cosine similarity of each chunk of `document` to `query`, in chunk order ([] on failure)."""
    if not query:
        return []
    if not document.collection.vectors_in_column:
        return []  # re-embedded with another model (corpus.reembed): the chart reads Chunk.embedding only
    try:
        vector = embed_queries([query], model=document.collection.embedding_model)[0]
    except Exception:  # the chart is an explanation, never a reason for the page to fail
        logger.warning("could not embed the query for the relevance chart", exc_info=True)
        return []
    rows = (Chunk.objects.filter(document=document).order_by("chunk_index")
            .annotate(distance=CosineDistance("embedding", vector)).values_list("distance", flat=True))
    return [None if d is None else round(max(0.0, 1.0 - float(d)), 4) for d in rows]
