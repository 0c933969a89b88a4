"""Turn a search result into the numbered sources of an answer ([1]..[n]) and the relevance map
kept with the message. Works on the SearchResult of chat.retrieval.search (objects or dicts alike)."""

from __future__ import annotations

import re
from typing import Any

# Character budget of all sources given to the LLM (or scanned for an extractive answer).
CONTEXT_CHARS = 12000
MAX_SOURCES = 8


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def document_ref(document: Any) -> dict:
    """{"id", "title", "source"} of a document given as a model, a dataclass or a dict."""
    return {"id": _field(document, "id"), "title": _field(document, "title") or "",
            "source": _field(document, "source") or ""}


def _page_for(document_id: int, char_start: int | None, pages: dict[int, list[int]]) -> int | None:
    offsets = pages.get(document_id) or []
    if char_start is None or not offsets:
        return None
    page = 1
    for number, start in enumerate(offsets, start=1):
        if start <= char_start:
            page = number
    return page


def _document_pages(document_ids: set[int]) -> dict[int, list[int]]:
    from corpus.models import Document

    return dict(Document.objects.filter(pk__in=document_ids).values_list("pk", "pages"))


def build_citations(result: Any, *, budget: int = CONTEXT_CHARS, max_sources: int = MAX_SOURCES) -> list[dict]:
    """Numbered sources from RSE segments, or from the top chunks when there are no segments
    (collections with overlapping chunks get none). Texts are cut to fit `budget` characters."""
    items = []
    for segment in _field(result, "segments", None) or []:
        items.append({
            "document": document_ref(_field(segment, "document")),
            "start": _field(segment, "start"), "end": _field(segment, "end"),
            "char_start": _field(segment, "char_start"), "char_end": _field(segment, "char_end"),
            "text": _field(segment, "text") or "", "score": _field(segment, "score"),
            "page": _field(segment, "page"),
        })
    if not items:
        for chunk in _field(result, "chunks", None) or []:
            index = _field(chunk, "chunk_index")
            items.append({
                "document": document_ref(_field(chunk, "document")),
                "start": index, "end": index + 1,
                "char_start": _field(chunk, "start"), "char_end": _field(chunk, "end"),
                "text": _field(chunk, "text") or "", "score": _field(chunk, "score"),
                "page": _field(chunk, "page"),
            })
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
                c["page"] = _page_for(c["document"]["id"], c["char_start"], pages)
    for n, citation in enumerate(citations, start=1):
        citation["n"] = n
        if isinstance(citation["score"], int | float):
            citation["score"] = round(float(citation["score"]), 4)
    return citations


def relevance_map(result: Any) -> dict[str, dict[str, float]]:
    """{"<document id>": {"<chunk index>": relevance}} for the retrieved chunks (JSON keys are strings)."""
    relevance: dict[str, dict[str, float]] = {}
    for chunk in _field(result, "chunks", None) or []:
        value = _field(chunk, "relevance")
        if value is None:
            continue
        doc_id = str(document_ref(_field(chunk, "document"))["id"])
        relevance.setdefault(doc_id, {})[str(_field(chunk, "chunk_index"))] = round(float(value), 4)
    return relevance


def citation_url(message_id: int, n: int) -> str:
    """The passage view of citation [n]; the fragment scrolls the highlight into view, with or without JS."""
    from django.urls import reverse

    return reverse("chat:passage", args=[message_id, n]) + "#passage"


def public_citations(message) -> list[dict]:
    """Citations as the API returns them: n, document, chunk range [start, end), text, page, url."""
    return [{"n": c["n"], "document": c["document"], "start": c["start"], "end": c["end"], "text": c["text"],
             "page": c.get("page"), "url": citation_url(message.pk, c["n"])} for c in message.citations]


def chunk_range_label(start: int, end: int) -> str:
    return f"chunk {start}" if end - start <= 1 else f"chunks {start}–{end - 1}"


_CITED = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")


def cited_numbers(text: str) -> list[int]:
    """The [n] (and [n, m]) numbers cited in `text`, in order of first citation."""
    numbers = (int(part) for match in _CITED.finditer(text) for part in match.group(1).split(","))
    return list(dict.fromkeys(numbers))
