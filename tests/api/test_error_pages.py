"""Web pages' errors (404, 403, 500) are pages in the app's look with the way back to the chat, not
Django's bare ones; /favicon.ico answers with the app's icon. API paths keep their JSON errors."""

from __future__ import annotations

import pytest
from django.test import Client

from corpus.models import Collection

pytestmark = pytest.mark.django_db


def test_it_shows_the_apps_404_page_with_the_way_back(client, user):
    client.force_login(user)
    response = client.get("/no/such/page/")
    page = response.content.decode()
    assert response.status_code == 404
    assert [t.name for t in response.templates][:3] == ["404.html", "base.html", "_error.html"]
    assert "<h1 id=\"error-heading\">Page not found</h1>" in page
    assert '<a class="button primary back-to-chat" href="/">Back to the chat</a>' in page
    assert "/no/such/page/" in page and 'rel="stylesheet"' in page
    assert ">alice<" in page  # the usual header, signed in


def test_it_keeps_json_404s_for_the_api(client, user):
    response = client.get("/api/nothing-here/")
    assert response.status_code == 404 and response.json() == {
        "detail": "No API endpoint /api/nothing-here/; see /api/docs/."}


def test_it_shows_the_apps_403_page_with_the_reason(client, user, other_user):
    collection = Collection.objects.create(slug="garden", name="Garden", owner=other_user)
    collection.readers.add(user)
    client.force_login(user)
    response = client.post("/sources/garden/add/", {"kind": "url", "url": "https://example.org/"})
    page = response.content.decode()
    assert response.status_code == 403
    assert "<h1 id=\"error-heading\">Not allowed</h1>" in page and "Back to the chat" in page
    assert 'class="muted error-detail"' in page  # the reason permissions gave


def test_it_shows_the_apps_500_page(user, settings):
    settings.ROOT_URLCONF = "tests.api.broken_urls"
    client = Client(raise_request_exception=False)
    client.force_login(user)
    response = client.get("/boom/")
    page = response.content.decode()
    assert response.status_code == 500
    assert "<h1 id=\"error-heading\">Something went wrong</h1>" in page and 'href="/">Back to the chat' in page
    assert "boom" not in page  # nothing of the error itself


def test_favicon_ico_answers_with_the_apps_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/ragweb/favicon.png"
    icon = client.get(response["Location"])
    assert icon.status_code == 200 and icon["Content-Type"] == "image/png"
    assert b"".join(icon.streaming_content)[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_page_links_the_local_icon(client):
    page = client.get("/login/").content.decode()
    assert '<link rel="icon" href="/static/ragweb/favicon.svg" type="image/svg+xml">' in page
    assert client.get("/static/ragweb/favicon.svg")["Content-Type"] == "image/svg+xml"


def test_a_refused_csrf_token_shows_the_apps_page_saying_to_reload(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post("/logout/", HTTP_ACCEPT="text/html,application/xhtml+xml")
    page = response.content.decode()
    assert response.status_code == 403
    assert [t.name for t in response.templates][:3] == ["403_csrf.html", "base.html", "_error.html"]
    assert "<h1 id=\"error-heading\">Please reload the page</h1>" in page and "Back to the chat" in page
    assert "security token" in page and "CSRF verification failed" not in page  # not Django's own page


def test_a_refused_csrf_token_is_json_for_api_clients_and_text_for_scripts(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    as_json = client.post("/logout/", HTTP_ACCEPT="application/json")
    assert as_json.status_code == 403 and as_json.json()["detail"].startswith("The form was sent without")
    as_text = client.post("/ask/", {"question": "hi"}, HTTP_ACCEPT="text/event-stream")
    assert as_text.status_code == 403 and as_text["Content-Type"] == "text/plain; charset=utf-8"
    assert "Reload the page" in as_text.content.decode()
