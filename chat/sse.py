"""Server-sent events framing, shared by the chat page and POST /api/ask/ with stream=true."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from django.http import StreamingHttpResponse


def sse_event(event: str, data: dict) -> str:
    # json.dumps never emits a raw newline, so one data: line carries the whole payload.
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def sse_response(events: Iterable[str]) -> StreamingHttpResponse:
    def body() -> Iterator[str]:
        yield ": stream open\n\n"  # sent at once so the client knows the request was accepted
        yield from events

    response = StreamingHttpResponse(body(), content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: do not buffer the stream
    return response
