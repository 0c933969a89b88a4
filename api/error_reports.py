"""What error pages may disclose, whatever DEBUG is.

- SettingsFilter (DEFAULT_EXCEPTION_REPORTER_FILTER): the 500 debug page and mailed error reports
  hide every setting and request header that names a service address (DATABASE_URL,
  CELERY_BROKER_URL, LLM_BASE_URL, DATABASE_REPLICA_URLS...) or holds a URL with credentials in it,
  besides Django's own secrets (keys, tokens, passwords).
- PlainNotFoundMiddleware: an unknown URL gets the ordinary 404 page (handler404), never DEBUG's
  page that lists every URL pattern of the site.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404
from django.views.debug import SafeExceptionReporterFilter

from api.errors import not_found

# Django's names plus settings ending in _URL(S) or _BACKEND: service addresses carry passwords.
_HIDDEN_NAMES = re.compile(r"API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|_URLS?$|_BACKEND$|^DATABASE",
                           flags=re.I)
# scheme://user:password@host or scheme://token@host, wherever it appears.
_CREDENTIAL_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s@]+@", flags=re.I)


class SettingsFilter(SafeExceptionReporterFilter):
    hidden_settings = _HIDDEN_NAMES

    def cleanse_setting(self, key, value):
        if isinstance(value, str) and _CREDENTIAL_URL.search(value):
            return self.cleansed_substitute
        return super().cleanse_setting(key, value)

    def get_traceback_frame_variables(self, request, tb_frame):
        """A frame's local variables, any string holding a URL with credentials hidden."""
        return [(name, self.cleansed_substitute if isinstance(value, str) and _CREDENTIAL_URL.search(value)
                 else value) for name, value in super().get_traceback_frame_variables(request, tb_frame)]


class PlainNotFoundMiddleware:
    """Replace DEBUG's technical 404 for an unresolved URL (it lists the URL patterns) with the
    handler404 page. A 404 a view raised keeps its own page."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.DEBUG and response.status_code == 404 and getattr(request, "resolver_match", None) is None:
            return not_found(request, Resolver404({"path": request.path_info}))
        return response
