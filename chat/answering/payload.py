"""An answered question as clients receive it: the body of POST /api/ask/ (through its output
serializer, api.ask.AskOutput), of MCP's ask and of `manage.py ask --json`; a source as every
answer lists it (/v1's citations too).

The text rule of every surface (chat.client_markdown): the answer is Markdown made inert
(client_markdown: no raw HTML, no javascript: links, no images); every other text field is plain
text with "&", "<" and ">" escaped (client_text), so a document's markup never runs in a client."""

from __future__ import annotations

from chat.answering.citations import citation_url
from chat.client_markdown import client_markdown
from chat.client_text import client_text


def answer_payload(message) -> dict:
    """{"answer", "mode", "status", "error", "confidence", "citations", "query", "conversation", "message"}
    of an assistant message (chat.models.Message); each citation with the `url` of its passage page."""
    return {"answer": client_markdown(message.content), "mode": message.mode, "status": message.status,
            "error": client_text(message.error), "confidence": message.confidence,
            "citations": [{**source_payload(c), "url": citation_url(message.pk, c["n"])} for c in message.citations],
            "query": client_text(message.query), "conversation": message.conversation_id, "message": message.pk}


def source_payload(citation: dict) -> dict:
    """Source [n] of an answer: {"n", "document": {"id", "title", "source"}, "start", "end" (its
    chunk range, end exclusive), "text", "page"}."""
    document = citation["document"]
    return {"n": citation["n"], "document": {"id": document["id"], "title": client_text(document["title"]),
                                             "source": client_text(document["source"])},
            "start": citation["start"], "end": citation["end"], "text": client_text(citation["text"]),
            "page": citation.get("page")}
