"""Every API error is JSON with a readable message, never an HTML page."""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler

logger = logging.getLogger(__name__)


def json_exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        return Response({"detail": "; ".join(exc.messages)}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, DjangoPermissionDenied):
        return Response({"detail": str(exc) or "Permission denied."}, status=status.HTTP_403_FORBIDDEN)
    response = exception_handler(exc, context)
    if response is not None:
        return response
    logger.exception("unhandled API error")
    return Response({"detail": "Internal error; the server log has the details."},
                    status=status.HTTP_500_INTERNAL_SERVER_ERROR)
