"""One HTTP request through the official SDK's streamable HTTP handling, from a WSGI thread.

ragweb is served by gunicorn threads (WSGI) and the SDK's transport is ASGI. The SDK's stateless
mode with JSON responses makes each POST self-contained (no session to keep between requests, no
stream left open), so a request can be served whole inside the view: a session manager is made
for it, runs its own short-lived task group (asgiref's async_to_sync, whose loop hands the tools
back to this thread), and the ASGI response is collected into a Django HttpResponse. No event loop
or thread outlives the request, and gunicorn's request timeout and body buffering apply as to any
view.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio
from asgiref.sync import async_to_sync
from django.http import HttpRequest, HttpResponse
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from mcp_server.server import server

# Response headers the SDK sets that describe the body we pass on as is.
_KEPT_HEADERS = {"content-type", "mcp-session-id", "mcp-protocol-version", "allow", "www-authenticate"}


@dataclass
class _Collected:
    status: int = 500
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)


def _scope(request: HttpRequest, path: str) -> dict:
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers.items()]
    return {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "method": request.method, "scheme": request.scheme, "path": path, "raw_path": path.encode(),
            "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"), "root_path": "",
            "headers": headers, "server": (request.get_host().rsplit(":", 1)[0], int(request.get_port())),
            "client": (request.META.get("REMOTE_ADDR", ""), 0)}


async def _serve(scope: dict, body: bytes, max_body: int) -> _Collected:
    collected = _Collected()
    answered = anyio.Event()
    delivered = False

    async def receive() -> dict:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        # The client is there until the response is complete (a disconnect would cancel the work).
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            collected.status = message["status"]
            collected.headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", [])]
        elif message["type"] == "http.response.body":
            collected.body += message.get("body", b"")
            if not message.get("more_body", False):
                answered.set()

    manager = StreamableHTTPSessionManager(
        # The SDK's own MCPServer.streamable_http_app builds its manager on this low-level server the
        # same way; a manager per request is what keeps every request independent of the others.
        app=server._lowlevel_server,
        json_response=True, stateless=True, max_request_body_size=max_body)
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return collected


def handle(request: HttpRequest, *, path: str, max_body: int) -> HttpResponse:
    """The SDK's answer to a POST `request` (one JSON-RPC message) as a Django response: a request's
    response as JSON, 202 for a notification, 400 for a body that is not JSON-RPC, 413 for one over
    `max_body` bytes. Only POSTs: the SDK would hold a stateless GET open waiting for a stream."""
    collected = async_to_sync(_serve)(_scope(request, path), request.body, max_body)
    response = HttpResponse(bytes(collected.body), status=collected.status)
    for name, value in collected.headers:
        if name.lower() in _KEPT_HEADERS:
            response[name] = value
    return response
