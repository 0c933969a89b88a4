"""Every API error is JSON with a readable message, never an HTML page; this handler is the one
place that turns exceptions into error responses.

- REST endpoints (/api/): `{"detail": "message"}`, or DRF's `{"field": ["message", ...]}` for bad
  input (400).
- OpenAI-compatible endpoints (/v1, views with `openai_errors = True`): OpenAI's shape,
  `{"error": {"message", "type", "param", "code"}}`, so OpenAI clients raise their usual errors.

corpus.permissions.Denied carries its own status: 404 when the caller may not read the
collection or document (its existence is not revealed), 403 when they may read but not change it.

Failures that are the service's state, not a bug, get the same answer everywhere (API, /v1, web
pages, /admin), from service_error_response: a body over DATA_UPLOAD_MAX_MEMORY_SIZE is 413, the
database or the task queue being unreachable (a connection refused or lost) is 503 with Retry-After, and a value the
database refuses as out of range (a huge ?limit=) is 400; never a 500. The DRF handler below
covers the API; ServiceErrorMiddleware covers other views, and server_error (handler500) what is
raised outside any view (a middleware reading the session).
"""

from __future__ import annotations

import logging
import sys

import kombu.exceptions
import redis.exceptions
from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import (
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from corpus.permissions import Denied
from corpus.services import DocumentGone

logger = logging.getLogger(__name__)


class OpenAIError(exceptions.APIException):
    """An error to answer in OpenAI's shape with its `type` and `code` (e.g. model_not_found)."""

    def __init__(self, message: str, *, status_code: int, type: str = "invalid_request_error",
                 code: str | None = None, param: str | None = None):
        super().__init__(message)
        self.status_code = status_code
        self.error_type, self.error_code, self.param = type, code, param


def json_exception_handler(exc, context):
    response = _rest_response(exc, context)
    if response is None:
        logger.exception("unhandled API error", exc_info=exc)
        response = Response({"detail": "Internal error; the server log has the details."},
                            status=status.HTTP_500_INTERNAL_SERVER_ERROR)
    if getattr(context.get("view"), "openai_errors", False):
        response.data = {"error": _openai_error(exc, response)}
    return response


DATABASE_DOWN = "The database is unavailable at the moment; try again in a minute."
# Raised after the upload's transaction committed: the document is saved, its processing not queued.
QUEUE_DOWN = ("The task queue is unavailable at the moment: the document was saved but not queued for processing; "
              "send it again in a minute (or it is queued when a worker next starts).")
RETRY_AFTER_SECONDS = 30
_JSON_PREFIXES = ("/api/", "/v1/", "/healthz")


def service_error(exc: BaseException) -> tuple[int, str] | None:
    """(status, message) for an exception that is the service's state, not a bug: a request body
    over the limit (413), a database that cannot be reached (503) or a document deleted by a
    concurrent request (404); None for anything else."""
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE / (1024 * 1024)
        return 413, f"The request body is over the {limit:g} MB limit."
    if isinstance(exc, OperationalError | InterfaceError):
        return 503, DATABASE_DOWN
    if isinstance(exc, kombu.exceptions.OperationalError | redis.exceptions.ConnectionError):
        return 503, QUEUE_DOWN
    if isinstance(exc, DocumentGone):  # a concurrent delete got there first
        return 404, str(exc)
    if isinstance(exc, DataError):  # e.g. ?limit=10**40 or ?q=%00: the value reached the database unchecked
        if "NUL" in str(exc):  # psycopg: "PostgreSQL text fields cannot contain NUL (0x00) bytes"
            return 400, "A value in the request contains a NUL character, which cannot be stored or searched."
        return 400, "A value in the request is out of range (a number too large, say)."
    return None


def wants_json(request: HttpRequest) -> bool:
    return request.path.startswith(_JSON_PREFIXES) or "application/json" in request.headers.get("Accept", "")


def service_error_response(request: HttpRequest, exc: BaseException) -> HttpResponse | None:
    """The 413/503 response for `exc` (see service_error): JSON ({"detail"}, or OpenAI's shape under
    /v1/) for API clients, a short plain page for browsers; None when `exc` is something else."""
    known = service_error(exc)
    if known is None:
        return None
    code, message = known
    if code == 503:
        logger.warning("%s %s: database unavailable: %s", request.method, request.path, exc)
    if request.path.startswith("/v1/"):
        kind = "api_error" if code == 503 else "invalid_request_error"
        response = JsonResponse({"error": {"message": message, "type": kind, "param": None,
                                           "code": _OPENAI_CODES[code]}}, status=code)
    elif wants_json(request):
        response = JsonResponse({"detail": message}, status=code)
    else:
        response = HttpResponse(message, status=code, content_type="text/plain; charset=utf-8")
    if code == 503:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class ServiceErrorMiddleware:
    """413/503 instead of a 500 page for views outside DRF (web pages, /healthz, the admin)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        return service_error_response(request, exc)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: what a middleware raised (no view to catch it). 413/503 as above; else JSON for
    API paths, templates/500.html for the rest."""
    exc = sys.exc_info()[1]
    response = service_error_response(request, exc) if exc is not None else None
    if response is not None:
        return response
    if wants_json(request):
        return JsonResponse({"detail": "Internal error; the server log has the details."}, status=500)
    return defaults.server_error(request)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: an unknown URL under /api/ or /v1/ is a JSON 404 (OpenAI's shape under /v1/);
    web pages get templates/404.html, in the app's look with the way back to the chat."""
    if request.path.startswith("/v1/"):
        return JsonResponse({"error": {"message": f"Unknown endpoint {request.method} {request.path}.",
                                       "type": "invalid_request_error", "param": None, "code": "unknown_url"}},
                            status=404)
    if wants_json(request):
        return JsonResponse({"detail": f"No API endpoint {request.path}; see /api/docs/."}, status=404)
    return defaults.page_not_found(request, exception)


CSRF_FAILED = ("The form was sent without a valid security token: the page was open too long, you signed in "
               "or out in another tab, or this site's cookies are blocked. Reload the page and try again.")


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a 403 in the app's look (templates/403_csrf.html) with what to do, not Django's
    own page; JSON {"detail"} for API clients, plain text for scripts that want neither (chat.js shows
    it). Django's `reason` goes to the log only: it is for developers."""
    logger.warning("CSRF failure on %s %s: %s", request.method, request.path, reason)
    if wants_json(request):
        return JsonResponse({"detail": CSRF_FAILED}, status=403)
    if "text/html" not in request.headers.get("Accept", ""):
        return HttpResponse(CSRF_FAILED, status=403, content_type="text/plain; charset=utf-8")
    return render(request, "403_csrf.html", {"text": CSRF_FAILED}, status=403)


def _rest_response(exc, context) -> Response | None:
    known = service_error(exc)
    if known is not None:
        code, message = known
        if code == 503:
            logger.warning("API: database unavailable: %s", exc)
        return Response({"detail": message}, status=code,
                        headers={"Retry-After": str(RETRY_AFTER_SECONDS)} if code == 503 else None)
    if isinstance(exc, Denied):
        return Response({"detail": str(exc)}, status=exc.status)
    if isinstance(exc, TooManyFilesSent):
        return Response({"detail": f"Send at most {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files in one request."},
                        status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, TooManyFieldsSent):
        return Response({"detail": f"Send at most {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields in one request."},
                        status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, SuspiciousOperation):  # Django refused to read the request as sent
        logger.warning("API: suspicious request refused: %s", exc)
        return Response({"detail": "The request was refused as malformed."}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, DjangoValidationError):  # from a service: per field when it names fields
        if hasattr(exc, "error_dict"):
            body = {"non_field_errors" if name == "__all__" else name: messages
                    for name, messages in exc.message_dict.items()}
        else:
            body = {"detail": " ".join(exc.messages)}
        return Response(body, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, DjangoPermissionDenied):
        return Response({"detail": str(exc) or "Permission denied."}, status=status.HTTP_403_FORBIDDEN)
    return exception_handler(exc, context)


# OpenAI's error type and code for each status (https://platform.openai.com/docs/guides/error-codes).
_OPENAI_KINDS = {
    400: ("invalid_request_error", "invalid_value"),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", "forbidden"),
    404: ("invalid_request_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    415: ("invalid_request_error", "unsupported_media_type"),
    413: ("invalid_request_error", "request_too_large"),
    429: ("requests", "rate_limit_exceeded"),
    503: ("api_error", "service_unavailable"),
}
_OPENAI_CODES = {400: "invalid_value", 404: "not_found", 413: "request_too_large", 503: "service_unavailable"}


def _openai_error(exc, response: Response) -> dict:
    if isinstance(exc, OpenAIError):
        return {"message": str(exc.detail), "type": exc.error_type, "param": exc.param, "code": exc.error_code}
    kind, code = _OPENAI_KINDS.get(response.status_code, ("api_error", "server_error"))
    message, param = _flatten(response.data)
    return {"message": message, "type": kind, "param": param, "code": code}


def _flatten(data, field: str | None = None) -> tuple[str, str | None]:
    """One sentence from a DRF error body, and the first field it names."""
    if isinstance(data, dict):
        if set(data) == {"detail"}:
            return _flatten(data["detail"], field)
        for name, value in data.items():
            # The innermost field names the parameter (ragweb_filters' "after"); a list field's errors
            # are keyed by index (0), which names no parameter.
            named = field if name == "non_field_errors" or str(name).isdigit() else str(name)
            message, param = _flatten(value, named)
            prefix = f"{name}: " if name not in {"detail", "non_field_errors"} else ""
            return prefix + message, param
        return "Bad request.", field
    if isinstance(data, list):
        return " ".join(_flatten(item, field)[0] for item in data) or "Bad request.", field
    return str(data), field


class ErrorOutput(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, for a person.")


def _validation_error_schema() -> dict:
    # A list or nested field's messages are themselves keyed by index or sub-field ({"0": [...]}).
    messages = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"anyOf": [{"type": "string"},
                                                                                    {"type": "object"}]}},
                          {"type": "object"}]}
    return {"type": "object", "additionalProperties": messages,
            "description": "Each field of the request that is wrong (or `non_field_errors` / `detail`) "
                           "with its messages; a list or nested field's messages keyed by index or sub-field.",
            "example": {"query": ["The query is empty."]}}


BAD_REQUEST = OpenApiResponse(_validation_error_schema(), description="Bad input; the messages say why.")
UNAUTHORIZED = OpenApiResponse(ErrorOutput, description="No or invalid credentials.")
FORBIDDEN = OpenApiResponse(ErrorOutput, description="You may read this collection but not do this.")
NOT_FOUND = OpenApiResponse(ErrorOutput, description="No such collection or document that you may read.")
THROTTLED = OpenApiResponse(ErrorOutput, description="Too many requests; retry after the `Retry-After` header.")


def errors(*codes: int) -> dict:
    """The declared error responses for `codes`, for @extend_schema(responses={**ok, **errors(...)})."""
    known = {400: BAD_REQUEST, 401: UNAUTHORIZED, 403: FORBIDDEN, 404: NOT_FOUND, 429: THROTTLED}
    return {code: known[code] for code in codes}
