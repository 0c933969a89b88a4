"""413 for a body over the limit and 503 when the database cannot be reached, never a 500: the API
(JSON), the OpenAI-compatible /v1 (OpenAI's error shape) and the web pages (a short plain page)."""

from __future__ import annotations

import json
import socket
from contextlib import contextmanager

import pytest
from django.db import OperationalError, connection
from django.test import RequestFactory
from rest_framework.test import APIClient

from accounts.services import token_create
from api.errors import DATABASE_DOWN, server_error


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
    return client


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def database_down():
    """The database refuses connections (its port has nobody listening) until the block ends."""
    port = connection.settings_dict["PORT"]
    connection.close()
    connection.settings_dict["PORT"] = _free_port()
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict["PORT"] = port


@pytest.mark.django_db
def test_an_oversized_json_body_is_413_json(api):
    body = json.dumps({"query": "a" * 20_000_000})

    response = api.post("/api/search/", data=body, content_type="application/json")

    assert response.status_code == 413
    assert response.json() == {"detail": "The request body is over the 10 MB limit."}


@pytest.mark.django_db
def test_an_oversized_body_on_v1_is_413_in_openai_shape(api):
    body = json.dumps({"model": "all", "messages": [{"role": "user", "content": "a" * 20_000_000}]})

    response = api.post("/v1/chat/completions", data=body, content_type="application/json")

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"
    assert "10 MB" in response.json()["error"]["message"]


@pytest.mark.django_db
def test_an_oversized_form_on_a_web_page_is_413(client, user):
    client.force_login(user)

    response = client.post("/ask/", data={"question": "a" * 11_000_000})

    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/plain")


@pytest.mark.django_db(transaction=True)
def test_the_api_answers_503_json_when_the_database_is_down(api):
    with database_down():
        search = api.post("/api/search/", {"query": "bread"}, format="json")
        documents = api.get("/api/documents/")
        models = api.get("/v1/models")

    for response in (search, documents):
        assert response.status_code == 503
        assert response.json() == {"detail": DATABASE_DOWN}
        assert response["Retry-After"] == "30"
    assert models.status_code == 503
    assert models.json()["error"]["code"] == "service_unavailable"


@pytest.mark.django_db(transaction=True)
def test_web_pages_answer_503_when_the_database_is_down(client, user, admin_user):
    client.force_login(admin_user)
    with database_down():
        pages = [client.get(path) for path in ("/", "/documents/", "/admin/", "/admin/corpus/document/")]
        health = client.get("/healthz")

    for response in pages:
        assert response.status_code == 503, response.request["PATH_INFO"]
        assert response.content.decode() == DATABASE_DOWN
    assert health.status_code == 503 and health.json() == {"status": "unhealthy"}  # details need the database


def test_an_error_raised_outside_any_view_is_answered_by_handler500():
    request = RequestFactory().get("/api/documents/")
    try:
        raise OperationalError("connection refused")
    except OperationalError:
        response = server_error(request)
    assert response.status_code == 503 and json.loads(response.content) == {"detail": DATABASE_DOWN}

    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        response = server_error(request)
    assert response.status_code == 500 and json.loads(response.content)["detail"].startswith("Internal error")


@pytest.mark.django_db
def test_a_limit_too_large_for_the_database_is_400(api, user):
    from corpus.models import Collection

    Collection.objects.create(slug="notes", name="Notes", owner=user)

    response = api.get("/api/collections/?limit=8224364478860567066471252993146617856")

    assert response.status_code == 400
    assert response.json() == {"detail": "A value in the request is out of range (a number too large, say)."}


@pytest.mark.django_db(transaction=True)
def test_an_upload_while_the_task_queue_is_down_is_503_and_goes_through_when_sent_again(api, user, monkeypatch,
                                                                                         settings, tmp_path):
    import kombu.exceptions
    from django.core.files.uploadedfile import SimpleUploadedFile

    from api.errors import QUEUE_DOWN
    from corpus.models import Collection, Document
    from corpus.tasks import process_document_task

    settings.MEDIA_ROOT = tmp_path
    Collection.objects.create(slug="notes", name="Notes", owner=user)

    def broker_down(document_id):
        raise kombu.exceptions.OperationalError("Error 111 connecting to 127.0.0.1:63799. Connection refused.")

    sent = []
    with monkeypatch.context() as patched:
        patched.setattr(process_document_task, "delay", broker_down)
        down = api.post("/api/documents/", {"collection": "notes", "file": SimpleUploadedFile("a.md", b"# A\n")})
    monkeypatch.setattr(process_document_task, "delay", sent.append)
    again = api.post("/api/documents/", {"collection": "notes", "file": SimpleUploadedFile("a.md", b"# A\n")})

    assert down.status_code == 503 and down.json() == {"detail": QUEUE_DOWN}
    assert again.status_code == 201
    document = Document.objects.get(source="a.md")
    assert sent == [document.pk] and document.status == Document.Status.QUEUED


@pytest.mark.django_db
def test_a_chat_completion_whose_question_is_null_is_400_not_500(api):
    # Found by schemathesis: null content passed validation and crashed on .strip().
    body = {"model": "ragweb", "messages": [{"role": "assistant", "content": None}, {"role": "user", "content": None}]}

    response = api.post("/v1/chat/completions", body, format="json")

    assert response.status_code == 400
    assert "The last message must be the user's question." in response.json()["error"]["message"]
