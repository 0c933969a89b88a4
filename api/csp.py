"""The Content-Security-Policy header on every response (settings.CONTENT_SECURITY_POLICY): scripts,
styles, images and requests from this site only, no inline script, no plugins, no framing. The
pages, htmx (configured in base.html to inject no style and evaluate no code), the admin and the
API docs (Swagger UI with its script served as a file) all work under it: see
tests/browser/test_csp_browser.py. A view that sets its own header keeps it."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.CONTENT_SECURITY_POLICY:
            response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response
