"""The request being served, for audit events recorded from model signals (a group joined, a flag
or a password changed), which are not handed the request: who did it and from where.

RequestContextMiddleware sets it for the length of each request; outside one (a management
command, a Celery task) there is none and the event names no actor.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

_request: ContextVar[Any] = ContextVar("audit_request", default=None)


def current_request() -> Any:
    """The request this thread (or task) is serving, or None."""
    return _request.get()


class RequestContextMiddleware:
    """Makes the request known to audit.context.current_request while it is served. Placed after
    AuthenticationMiddleware, so `request.user` is there when an event reads it."""

    def __init__(self, get_response: Callable) -> None:
        self.get_response = get_response

    def __call__(self, request):
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)
