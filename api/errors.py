"""Every API error is JSON with a readable message, never an HTML page; this handler is the one
place that turns exceptions into error responses.

- REST endpoints (/api/): `{"detail": "message"}`, or DRF's `{"field": ["message", ...]}` for bad
  input (400).
- OpenAI-compatible endpoints (/v1, views with `openai_errors = True`): OpenAI's shape,
  `{"error": {"message", "type", "param", "code"}}`, so OpenAI clients raise their usual errors.

corpus.permissions.Denied carries its own status: 404 when the caller may not read the
collection or document (its existence is not revealed), 403 when they may read but not change it.
"""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from corpus.permissions import Denied

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


def _rest_response(exc, context) -> Response | None:
    if isinstance(exc, Denied):
        return Response({"detail": str(exc)}, status=exc.status)
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
    429: ("requests", "rate_limit_exceeded"),
}


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
            message, param = _flatten(value, name if name != "non_field_errors" else field)
            prefix = f"{name}: " if name not in {"detail", "non_field_errors"} else ""
            return prefix + message, param
        return "Bad request.", field
    if isinstance(data, list):
        return " ".join(_flatten(item, field)[0] for item in data) or "Bad request.", field
    return str(data), field


class ErrorOutput(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, for a person.")


def _validation_error_schema() -> dict:
    messages = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
    return {"type": "object", "additionalProperties": messages,
            "description": "Each field of the request that is wrong (or `non_field_errors` / `detail`) "
                           "with its messages.", "example": {"query": ["The query is empty."]}}


BAD_REQUEST = OpenApiResponse(_validation_error_schema(), description="Bad input; the messages say why.")
UNAUTHORIZED = OpenApiResponse(ErrorOutput, description="No or invalid credentials.")
FORBIDDEN = OpenApiResponse(ErrorOutput, description="You may read this collection but not do this.")
NOT_FOUND = OpenApiResponse(ErrorOutput, description="No such collection or document that you may read.")
THROTTLED = OpenApiResponse(ErrorOutput, description="Too many requests; retry after the `Retry-After` header.")


def errors(*codes: int) -> dict:
    """The declared error responses for `codes`, for @extend_schema(responses={**ok, **errors(...)})."""
    known = {400: BAD_REQUEST, 401: UNAUTHORIZED, 403: FORBIDDEN, 404: NOT_FOUND, 429: THROTTLED}
    return {code: known[code] for code in codes}
