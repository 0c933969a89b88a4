"""An answered question as clients receive it: the body of POST /api/ask/ (through its output
serializer, api.ask.AskOutput) and of `manage.py ask --json`."""

from __future__ import annotations

from chat.answering.citations import public_citations


def answer_payload(message) -> dict:
    """{"answer", "mode", "status", "error", "confidence", "citations", "query", "conversation", "message"}
    of an assistant message (chat.models.Message)."""
    return {"answer": message.content, "mode": message.mode, "status": message.status, "error": message.error,
            "confidence": message.confidence,
            "citations": public_citations(message), "query": message.query,
            "conversation": message.conversation_id, "message": message.pk}
