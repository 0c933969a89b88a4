"""The cited passage in its document: the text with the segment highlighted, and the chunk
relevance values that explain why it was chosen."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db.models import Max, Min
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from pgvector.django import CosineDistance

from chat.markdown import render_markdown
from corpus.ingest.embed import embed_query
from corpus.models import Chunk, Document

logger = logging.getLogger(__name__)

MARKDOWN_TYPES = {"text/markdown", "text/x-markdown"}


@dataclass
class Passage:
    char_start: int
    char_end: int
    html: SafeString


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


def highlighted_document(document: Document, char_start: int, char_end: int) -> SafeString:
    """The document text with [char_start, char_end) wrapped in <mark id="passage">."""
    text = document.text
    before, segment, after = text[:char_start], text[char_start:char_end], text[char_end:]
    if is_markdown(document):
        # Rendered in three parts so the mark surrounds whole blocks; chunk boundaries fall between
        # blocks for the Markdown chunker, and elsewhere the cost is a paragraph split in two.
        return format_html('<div class="doc markdown">{}<mark id="passage" class="passage block">{}</mark>{}</div>',
                           render_markdown(before), render_markdown(segment), render_markdown(after))
    return mark_safe(  # noqa: S308 — every piece of text is escaped here
        f'<pre class="doc plain">{escape(before)}<mark id="passage" class="passage">{escape(segment)}</mark>'
        f"{escape(after)}</pre>")


def chunk_similarities(document: Document, query: str) -> list[float | None]:
    """Cosine similarity of each chunk of `document` to `query`, in chunk order ([] on failure)."""
    if not query:
        return []
    try:
        vector = embed_query(query)
    except Exception:  # the chart is an explanation, never a reason for the page to fail
        logger.warning("could not embed the query for the relevance chart", exc_info=True)
        return []
    rows = (Chunk.objects.filter(document=document).order_by("chunk_index")
            .annotate(distance=CosineDistance("embedding", vector)).values_list("distance", flat=True))
    return [None if d is None else round(max(0.0, 1.0 - float(d)), 4) for d in rows]
