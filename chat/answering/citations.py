"""Turn a search result into the numbered sources of an answer ([1]..[n]) and the relevance map
kept with the message, from the SearchResult of chat.retrieval.search."""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.urls import reverse

from chat.retrieval import DocumentRef, SearchResult
from corpus.ingest.parse.base import page_number
from corpus.models import Document

# Character budget of all sources given to the LLM (or scanned for an extractive answer).
CONTEXT_CHARS = 12000
MAX_SOURCES = 8


def document_ref(document: DocumentRef) -> dict:
    """The stored form of a document reference: {"id", "title", "source"}."""
    return {"id": document.id, "title": document.title or "", "source": document.source or ""}


def _document_pages(document_ids: set[int]) -> dict[int, list[int]]:
    return dict(Document.objects.filter(pk__in=document_ids).values_list("pk", "pages"))


def build_citations(result: SearchResult, *, budget: int = CONTEXT_CHARS,
                    max_sources: int = MAX_SOURCES) -> list[dict]:
    """Numbered sources from RSE segments, or from the top chunks when there are no segments
    (collections with overlapping chunks get none). Texts are cut to fit `budget` characters.
    Each is the JSON stored on the answer's Message.citations: n, document, start, end (chunk
    range), char_start, char_end, text, score, page."""
    items = [{"document": document_ref(s.document), "start": s.start, "end": s.end, "char_start": s.char_start,
              "char_end": s.char_end, "text": s.text or "", "score": s.score, "page": s.page}
             for s in result.segments]
    if not items:
        items = [{"document": document_ref(c.document), "start": c.chunk_index, "end": c.chunk_index + 1,
                  "char_start": c.start, "char_end": c.end, "text": c.text or "", "score": c.score, "page": None}
                 for c in result.chunks]
    citations: list[dict] = []
    remaining = budget
    for item in items:
        if len(citations) >= max_sources or remaining <= 0 or not item["text"].strip():
            continue
        if len(item["text"]) > remaining:
            item["text"] = item["text"][:remaining].rstrip() + " …"
        remaining -= len(item["text"])
        citations.append(item)
    missing_pages = {c["document"]["id"] for c in citations if c["page"] is None}
    if missing_pages:
        pages = _document_pages(missing_pages)
        for c in citations:
            if c["page"] is None:
                c["page"] = page_number(pages.get(c["document"]["id"]) or [], c["char_start"] or 0)
    for n, citation in enumerate(citations, start=1):
        citation["n"] = n
        if isinstance(citation["score"], int | float):
            citation["score"] = round(float(citation["score"]), 4)
    return citations


def numbered_by_answer(citations: list[dict], cited: Sequence[int]) -> tuple[list[dict], dict[int, int]]:
    """Copies of `citations` numbered again for an answer that cites `cited` (numbers, in the
    order it cites them): those first, 1, 2, ... in that order, then the others in their order;
    and {old n: new n}. An answer quoting only the second source cites [1], and the sources listed
    under it start at 1."""
    order = list(dict.fromkeys(n for n in cited if any(c["n"] == n for c in citations)))
    order += [c["n"] for c in citations if c["n"] not in order]
    numbers = {old: new for new, old in enumerate(order, start=1)}
    by_number = {c["n"]: c for c in citations}
    return [{**by_number[old], "n": numbers[old]} for old in order], numbers


def relevance_map(result: SearchResult) -> dict[str, dict[str, float]]:
    """{"<document id>": {"<chunk index>": relevance}} for the retrieved chunks (JSON keys are strings)."""
    relevance: dict[str, dict[str, float]] = {}
    for chunk in result.chunks:
        relevance.setdefault(str(chunk.document.id), {})[str(chunk.chunk_index)] = round(float(chunk.relevance), 4)
    return relevance


def citation_url(message_id: int, n: int) -> str:
    """The passage view of citation [n]; the fragment scrolls the highlight into view, with or without JS."""
    return reverse("chat:passage", args=[message_id, n]) + "#passage"


def chunk_range_label(start: int, end: int) -> str:
    return f"chunk {start}" if end - start <= 1 else f"chunks {start}–{end - 1}"


# "[n]" or "[1, 2]" in an answer: the one pattern for citations, everywhere.
CITATION = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")


# Put after the "[" of a bracketed number quoted from a source: invisible, and not a digit, so the
# number no longer reads as a citation (CITATION) in the answer, in the chat or to an API client.
WORD_JOINER = "\u2060"


def quoted(text: str) -> str:
    """Source text as an answer or a prompt quotes it: its own "[n]" (footnote marks, references)
    made plain text that no surface takes for one of the answer's citations."""
    return CITATION.sub(lambda match: f"[{WORD_JOINER}{match.group(1)}]", text)


# Code in an answer (fenced blocks, an unclosed one running to the end, and `inline` spans): its
# brackets are indexes, not citations; the renderer (chat.markdown) links none of them either.
_CODE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)|`[^`\n]+`", re.MULTILINE | re.DOTALL)


def cited_numbers(text: str) -> list[int]:
    """The [n] (and [n, m]) numbers cited in `text` outside code, in order of first citation."""
    prose = _CODE.sub(" ", text)
    numbers = (int(part) for match in CITATION.finditer(prose) for part in match.group(1).split(","))
    return list(dict.fromkeys(numbers))
