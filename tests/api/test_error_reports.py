"""Error pages never show service URLs with their passwords, nor (DEBUG's 404) the URL patterns."""

from __future__ import annotations

import sys

import pytest
from django.test import RequestFactory
from django.views.debug import technical_500_response

PW = "".join(["hun", "ter2"])  # never written whole here: the 500 page shows this file's source lines
SECRETS = {
    "DATABASE_URL": f"postgres://ragweb:db-{PW}@db.internal:5432/ragweb",
    "CELERY_BROKER_URL": f"redis://:broker-{PW}@redis.internal:6379/0",
    "CELERY_RESULT_BACKEND": f"redis://:backend-{PW}@redis.internal:6379/1",
    "LLM_BASE_URL": f"https://llm-user:llm-{PW}@llm.internal/v1",
    "DATABASE_REPLICA_URLS": [f"postgres://ragweb:replica-{PW}@replica.internal/ragweb"],
    "SOME_NOTE": f"see https://token-{PW}@example.com/x",
}


def test_the_debug_500_page_hides_service_urls_and_their_passwords(settings):
    settings.DEBUG = True
    for name, value in SECRETS.items():
        setattr(settings, name, value)
    request = RequestFactory().get("/boom", HTTP_X_NOTE=f"postgres://u:header-{PW}@h/db")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        page = technical_500_response(request, *sys.exc_info()).content.decode()
    assert "RuntimeError" in page and "DATABASE_URL" in page  # the page itself, with the names
    assert PW not in page


@pytest.mark.django_db
def test_the_debug_404_page_lists_no_url_patterns(client, settings):
    settings.DEBUG = True
    page = client.get("/no-such-page/")
    text = page.content.decode()
    assert page.status_code == 404
    assert "admin/" not in text and "URLconf" not in text and "healthz" not in text
    assert client.get("/api/no-such-endpoint/").json() == {"detail": "No API endpoint /api/no-such-endpoint/; "
                                                                     "see /api/docs/."}
    assert client.get("/login").status_code == 301  # the slash redirect still happens first
