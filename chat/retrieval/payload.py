"""Search results as clients receive them: the body of POST /api/search/ (whose schema is
api.search.SearchOutput) and of MCP's search tool (which adds a link to each chunk and segment):
one shape for both. A chunk's `start`/`end` are character offsets into its document's text; a
segment's `start`/`end` are chunk indexes (end exclusive) and `char_start`/`char_end` its
character offsets. Text fields are plain text with "&", "<" and ">" escaped (chat.client_text.client_text,
the rule of every API surface).

Built directly rather than through DRF's serializer: it spent ~0.5 ms per search copying and
walking ~30 fields per chunk (docs/scaling.md, "Searches per second"). A test holds the two equal."""

from __future__ import annotations

from chat.client_text import client_text
from chat.retrieval.types import DocumentRef, ScoredChunk, SearchResult, Segment


def search_payload(result: SearchResult) -> dict:
    """{"query", "mode", "chunks", "segments", "timings_ms"} of `result`."""
    return {"query": client_text(str(result.query)), "mode": str(result.mode),
            "chunks": [chunk_payload(c) for c in result.chunks],
            "segments": [segment_payload(s) for s in result.segments],
            "timings_ms": {str(name): float(ms) for name, ms in result.timings_ms.items()}}


def document_payload(ref: DocumentRef) -> dict:
    return {"id": int(ref.id), "title": client_text(str(ref.title)), "source": client_text(str(ref.source))}


def _optional_int(value) -> int | None:
    return None if value is None else int(value)


def chunk_payload(c: ScoredChunk) -> dict:
    return {"chunk_id": int(c.chunk_id), "document": document_payload(c.document), "chunk_index": int(c.chunk_index),
            "text": client_text(str(c.text)), "start": int(c.start), "end": int(c.end), "score": float(c.score),
            "relevance": float(c.relevance),
            "ranks": {"vector": _optional_int(c.ranks.get("vector")), "keyword": _optional_int(c.ranks.get("keyword"))}}


def segment_payload(s: Segment) -> dict:
    return {"document": document_payload(s.document), "start": int(s.start), "end": int(s.end),
            "char_start": int(s.char_start), "char_end": int(s.char_end), "text": client_text(str(s.text)),
            "score": float(s.score), "page": _optional_int(s.page)}
