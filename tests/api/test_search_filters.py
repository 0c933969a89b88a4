"""The filter object on every way of searching: POST /api/search/ and /api/ask/ (`filters`),
/v1/chat/completions (`ragweb_filters`) and `manage.py search` (--media-type, --tag,
--source-prefix, --after, --before). The conditions themselves: tests/chat/retrieval/test_filters.py."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from accounts.services import token_create
from corpus.models import Document
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db
QUESTION = "What is the default request timeout?"


def _described(document: Document, *, tags: list[str], modified: str) -> Document:
    Document.objects.filter(pk=document.pk).update(metadata={
        "media_type": document.media_type, "path": document.source, "tags": tags, "created": modified,
        "modified": modified})
    return document


@pytest.fixture
def corpus(user):
    """The same guide twice: current (Markdown, tagged ops) and archived (PDF, tagged archive)."""
    guides = make_collection("guides", owner=user)
    current = _described(make_document(guides, source="ops/deploy.md", title="Deployment guide", parts=GUIDE),
                         tags=["ops"], modified="2025-02-01T00:00:00Z")
    archived = _described(make_document(guides, source="archive/deploy.pdf", title="Old deployment guide",
                                        parts=GUIDE, media_type="application/pdf"),
                          tags=["archive"], modified="2019-06-01T00:00:00Z")
    return {"current": current, "archived": archived}


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
    return client


def _sources(chunks_or_citations) -> set[str]:
    return {c["document"]["source"] for c in chunks_or_citations}


@pytest.mark.parametrize(("filters", "expected"), [
    (None, {"ops/deploy.md", "archive/deploy.pdf"}),
    ({"media_type": ["application/pdf"]}, {"archive/deploy.pdf"}),
    ({"tags": ["ops"]}, {"ops/deploy.md"}),
    ({"source_prefix": "archive/"}, {"archive/deploy.pdf"}),
    ({"after": "2020-01-01"}, {"ops/deploy.md"}),
    ({"before": "2020-01-01", "tags": ["archive", "ops"]}, {"archive/deploy.pdf"}),
])
def test_search_api_returns_only_matching_chunks(api, corpus, filters, expected):
    body = {"query": QUESTION, "k": 20} | ({"filters": filters} if filters is not None else {})
    response = api.post("/api/search/", body, format="json")
    assert response.status_code == 200, response.json()
    assert _sources(response.json()["chunks"]) == expected
    assert _sources(response.json()["segments"]) <= expected


def test_search_api_filter_matching_nothing_is_an_empty_200(api, corpus):
    response = api.post("/api/search/", {"query": QUESTION, "filters": {"tags": ["nowhere"]}}, format="json")
    assert response.status_code == 200 and response.json()["chunks"] == response.json()["segments"] == []


def test_search_api_bad_filters_are_a_400_naming_each_key(api, corpus):
    response = api.post("/api/search/", {"query": QUESTION, "filters": {
        "after": "yesterday", "tags": "x" * 65, "sort": "date"}}, format="json")
    assert response.status_code == 400
    assert response.json() == {"filters": {
        "after": ["'yesterday' is not a day as YYYY-MM-DD."], "tags": ["A tag is at most 64 characters."],
        "sort": ["Unknown filter; use media_type, tags, source_prefix, after, before."]}}
    response = api.post("/api/search/", {"query": QUESTION, "filters": ["ops"]}, format="json")
    assert response.status_code == 400 and "filters must be an object" in response.json()["filters"]["filters"][0]


def test_ask_api_answers_from_matching_documents_only(api, corpus, no_llm):
    for tags, source in ((["archive"], "archive/deploy.pdf"), (["ops"], "ops/deploy.md")):
        response = api.post("/api/ask/", {"question": QUESTION, "filters": {"tags": tags}}, format="json")
        body = response.json()
        assert response.status_code == 200 and body["status"] == "complete", body
        assert "thirty seconds" in body["answer"] and _sources(body["citations"]) == {source}

    nothing = api.post("/api/ask/", {"question": QUESTION, "filters": {"source_prefix": "drafts/"}}, format="json")
    assert nothing.status_code == 200 and (nothing.json()["answer"], nothing.json()["citations"]) == ("", [])
    bad = api.post("/api/ask/", {"question": QUESTION, "filters": {"before": "2024-13-01"}}, format="json")
    assert bad.status_code == 400 and bad.json() == {"filters": {"before": ["'2024-13-01' is not a day as "
                                                                            "YYYY-MM-DD."]}}


def test_v1_takes_the_filter_object_as_ragweb_filters(api, corpus, no_llm):
    def complete(**extra):
        return api.post("/v1/chat/completions", {"model": "ragweb/guides", "messages": [
            {"role": "user", "content": QUESTION}], **extra}, format="json")

    response = complete(ragweb_filters={"media_type": ["application/pdf"]})
    assert response.status_code == 200, response.json()
    assert _sources(response.json()["citations"]) == {"archive/deploy.pdf"}
    assert _sources(complete(ragweb_filters={"tags": ["ops"]}).json()["citations"]) == {"ops/deploy.md"}
    assert complete(ragweb_filters=None).json()["citations"]  # null: no filter
    nothing = complete(ragweb_filters={"tags": ["nowhere"]})
    assert nothing.status_code == 200 and nothing.json()["citations"] == []

    bad = complete(ragweb_filters={"after": 2024})
    assert bad.status_code == 400
    assert bad.json()["error"]["param"] == "after" and "2024 is not a day as YYYY-MM-DD." in bad.json()["error"][
        "message"]


def _command(*args) -> dict:
    out = StringIO()
    call_command("search", QUESTION, "--json", "--k", "20", *args, stdout=out)
    return json.loads(out.getvalue())


def test_the_search_command_takes_the_same_filters(corpus):
    assert _sources(_command()["chunks"]) == {"ops/deploy.md", "archive/deploy.pdf"}
    assert _sources(_command("--media-type", "application/pdf")["chunks"]) == {"archive/deploy.pdf"}
    assert _sources(_command("--tag", "nowhere", "--tag", "ops")["chunks"]) == {"ops/deploy.md"}
    assert _sources(_command("--source-prefix", "archive/")["chunks"]) == {"archive/deploy.pdf"}
    assert _sources(_command("--after", "2020-01-01", "--before", "2026-01-01")["chunks"]) == {"ops/deploy.md"}
    assert _command("--tag", "nowhere")["chunks"] == []
    with pytest.raises(CommandError, match="filters.after: 'soon' is not a day as YYYY-MM-DD."):
        _command("--after", "soon")
