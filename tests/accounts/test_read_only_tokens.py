"""A read-only token reads, searches and asks (safe methods and the read-like POSTs: /api/search/,
/api/ask/, /v1/chat/completions) and is refused every write with 403 and a clear message, the
write leaving no trace; the same user with a full token, or signed in, may write."""

from __future__ import annotations

import pytest
import requests
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import token_create
from chat.models import Feedback, Message
from corpus.models import Collection, Document
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db

QUESTION = "What is the request timeout?"


@pytest.fixture
def guide(user, no_llm, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    guides = make_collection("guides", owner=user)
    return make_document(guides, source="deploy.md", title="Deployment guide", parts=GUIDE)


def client(user, *, read_only: bool) -> APIClient:
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {token_create(user=user, read_only=read_only)[1]}")


def test_a_read_only_token_reads_searches_and_asks(user, guide):
    api = client(user, read_only=True)
    assert api.get("/api/collections/").json()["count"] == 1
    assert api.get(f"/api/documents/{guide.pk}/chunks/").json()["count"] == len(GUIDE)
    search = api.post("/api/search/", {"query": "request timeout"}, format="json")
    assert search.status_code == 200 and search.json()["chunks"][0]["document"]["id"] == guide.pk
    ask = api.post("/api/ask/", {"question": QUESTION}, format="json")
    assert ask.status_code == 200 and ask.json()["citations"]
    v1 = api.post("/v1/chat/completions", {"model": "ragweb/guides",
                                           "messages": [{"role": "user", "content": QUESTION}]}, format="json")
    assert v1.status_code == 200 and v1.json()["citations"]
    assert [m["id"] for m in api.get("/v1/models").json()["data"]] == ["ragweb", "ragweb/guides"]


def writes(guide: Document, message: Message | None):
    """(description, request maker, check that nothing changed) for each kind of write."""
    upload = {"file": SimpleUploadedFile("new.md", b"# New\n\nText."), "collection": "guides"}
    return [
        ("upload", lambda api: api.post("/api/documents/", upload, format="multipart"),
         lambda: not Document.objects.filter(source="new.md").exists()),
        ("create collection", lambda api: api.post("/api/collections/", {"name": "Notes"}, format="json"),
         lambda: not Collection.objects.filter(slug="notes").exists()),
        ("change collection", lambda api: api.patch("/api/collections/guides/", {"name": "Mine"}, format="json"),
         lambda: Collection.objects.get(slug="guides").name == "Guides"),
        ("delete collection", lambda api: api.delete("/api/collections/guides/"),
         lambda: Collection.objects.filter(slug="guides").exists()),
        ("delete document", lambda api: api.delete(f"/api/documents/{guide.pk}/"),
         lambda: Document.objects.filter(pk=guide.pk).exists()),
        ("re-ingest", lambda api: api.post(f"/api/documents/{guide.pk}/reingest/"),
         lambda: Document.objects.get(pk=guide.pk).status == Document.Status.READY),
        ("feedback", lambda api: api.post(f"/api/messages/{message.pk}/feedback/", {"rating": "up"}, format="json"),
         lambda: not Feedback.objects.exists()),
        ("make a token", lambda api: api.post("/api/tokens/", {"name": "more"}, format="json"),
         lambda: not ApiToken.objects.filter(name="more").exists()),
    ]


def test_a_read_only_token_is_refused_every_write_with_a_clear_message(user, guide,
                                                                        django_capture_on_commit_callbacks):
    api = client(user, read_only=True)
    message_id = api.post("/api/ask/", {"question": QUESTION}, format="json").json()["message"]
    message = Message.objects.get(pk=message_id)
    for name, request, unchanged in writes(guide, message):
        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = request(api)
        assert response.status_code == 403, (name, response.content)
        assert "This token is read-only" in response.json()["detail"], name
        assert unchanged(), name
        assert not queued, name


def test_the_same_writes_succeed_with_a_full_token(user, guide, django_capture_on_commit_callbacks):
    api = client(user, read_only=False)
    message = Message.objects.get(pk=api.post("/api/ask/", {"question": QUESTION}, format="json").json()["message"])
    for name, request, _ in writes(guide, message):
        if name in ("delete collection", "delete document"):
            continue  # would remove what the other rows write to; the permission matrix covers them
        with django_capture_on_commit_callbacks(execute=False):
            response = request(api)
        assert response.status_code < 300, (name, response.content)
    assert Collection.objects.get(slug="guides").name == "Mine" and Feedback.objects.count() == 1
    assert ApiToken.objects.filter(name="more").exists()
    assert client(user, read_only=False).delete("/api/collections/guides/").status_code == 204


def test_over_real_http_a_read_only_token_searches_but_makes_no_token(live_server, transactional_db, user):
    make_document(make_collection("guides", owner=user), source="deploy.md", title="Deployment guide", parts=GUIDE)
    _, key = token_create(user=user, read_only=True)
    http = requests.Session()
    http.headers["Authorization"] = f"Token {key}"
    search = http.post(f"{live_server.url}/api/search/", json={"query": "request timeout"}, timeout=60)
    assert search.status_code == 200 and search.json()["chunks"][0]["document"]["source"] == "deploy.md"
    refused = http.post(f"{live_server.url}/api/tokens/", json={"name": "more"}, timeout=60)
    assert refused.status_code == 403 and refused.json()["detail"].startswith("This token is read-only")
    assert list(ApiToken.objects.filter(user=user).values_list("read_only", flat=True)) == [True]
    listed = http.get(f"{live_server.url}/api/tokens/", timeout=60)
    assert listed.status_code == 200 and [t["read_only"] for t in listed.json()["results"]] == [True]
