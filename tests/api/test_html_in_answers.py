"""A document's raw HTML never reaches a client live (issue 40, item 8). One rule on every surface
(chat.client_markdown): the answer is Markdown made inert (no tags, no javascript: links); every
other text field (titles, sources, passages, names) is plain text with "&", "<" and ">" escaped."""

from __future__ import annotations

import html
import json

import pytest
from django.test import Client, RequestFactory

from accounts.services import token_create
from corpus.models import Collection
from mcp_server import tools
from tests.chat.chat_corpus import make_collection, make_document

QUESTION = "What is the default request timeout?"
IMG = "<img src=x onerror=alert(1)>"
LINK = "[the settings](javascript:alert(2))"
TITLE = "<b onmouseover=alert(3)>Deployment</b> guide"
PARTS = [
    "# Deployment\n\nThis guide explains how to deploy the service on one machine.\n\n",
    f"## Request timeout\n\nThe request timeout is thirty seconds by default {IMG}. "
    f"Read {LINK} to change the timeout.\n\n",
    "## Retries\n\nFailed requests are retried twice with exponential backoff before giving up.\n\n",
]


@pytest.fixture
def hostile(db, user):
    collection = make_collection("guides", owner=user)
    Collection.objects.filter(pk=collection.pk).update(name="<i onclick=alert(4)>Guides</i>")
    return make_document(collection, source="deploy<script>.md", title=TITLE, parts=PARTS)


@pytest.fixture
def key(user):
    return token_create(user=user)[1]


def assert_inert_markdown(answer: str) -> None:
    assert "thirty seconds" in answer
    assert "<img" not in answer and "onerror" not in answer  # the tag removed, its text (none) kept
    assert "](javascript:" not in answer


def assert_plain(text: str, raw: str) -> None:
    """`text` is `raw` as plain text: its markup escaped, nothing else changed."""
    assert "<" not in text and ">" not in text
    assert text == html.escape(raw, quote=False) and html.unescape(text) == raw


def assert_plain_source(source: dict) -> None:
    assert_plain(source["document"]["title"], TITLE)
    assert_plain(source["document"]["source"], "deploy<script>.md")
    assert "&lt;img src=x onerror=alert(1)&gt;" in source["text"] and "<" not in source["text"]


def test_api_ask_answers_in_inert_markdown_with_plain_citations(hostile, key, no_llm):
    body = Client().post("/api/ask/", {"question": QUESTION}, content_type="application/json",
                         HTTP_AUTHORIZATION=f"Token {key}").json()

    assert_inert_markdown(body["answer"])
    assert body["citations"]
    for citation in body["citations"]:
        assert_plain_source(citation)


def test_api_ask_streams_inert_markdown(hostile, key, no_llm):
    response = Client().post("/api/ask/", {"question": QUESTION, "stream": True}, content_type="application/json",
                             HTTP_ACCEPT="text/event-stream", HTTP_AUTHORIZATION=f"Token {key}")
    events = b"".join(response.streaming_content).decode().split("\n\n")
    tokens = [json.loads(e.split("data: ", 1)[1])["text"] for e in events if e.startswith("event: token")]
    done = json.loads(next(e for e in events if e.startswith("event: done")).split("data: ", 1)[1])

    assert_inert_markdown("".join(tokens))
    assert "".join(tokens) == done["answer"]


def test_api_search_returns_plain_text(hostile, key):
    body = Client().post("/api/search/", {"query": QUESTION}, content_type="application/json",
                         HTTP_AUTHORIZATION=f"Token {key}").json()

    for found in body["chunks"] + body["segments"]:
        assert_plain(found["document"]["title"], TITLE)
        assert "<" not in found["text"]
    assert any("&lt;img src=x onerror=alert(1)&gt;" in c["text"] for c in body["chunks"])


@pytest.mark.parametrize("stream", [False, True])
def test_v1_answers_in_inert_markdown_with_plain_citations(hostile, key, no_llm, stream):
    response = Client().post("/v1/chat/completions", {"model": "ragweb", "stream": stream,
                                                      "messages": [{"role": "user", "content": QUESTION}]},
                             content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}")
    if stream:
        chunks = [json.loads(e.removeprefix("data: ")) for e in b"".join(response.streaming_content).decode()
                  .split("\n\n") if e.startswith("data: {")]
        content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
        citations = chunks[-1]["citations"]
    else:
        body = response.json()
        content, citations = body["choices"][0]["message"]["content"], body["citations"]

    assert_inert_markdown(content)
    assert citations
    for citation in citations:
        assert_plain_source(citation)


def test_v1_model_names_are_plain_text(hostile, key):
    models = Client().get("/v1/models", HTTP_AUTHORIZATION=f"Bearer {key}").json()["data"]
    assert_plain(models[1]["name"], "<i onclick=alert(4)>Guides</i>")


def _caller(user) -> tools.Caller:
    request = RequestFactory().post("/mcp")
    request.user = user
    return tools.Caller(request)


def test_mcp_results_are_inert_markdown_and_plain_text(hostile, user, no_llm):
    caller = _caller(user)

    answered = tools.ask(caller, question=QUESTION)
    assert_inert_markdown(answered["answer"])
    for citation in answered["citations"]:
        assert_plain_source(citation)

    found = tools.search(caller, query=QUESTION)
    assert all("<" not in item["text"] and "<" not in item["document"]["title"]
               for item in found["chunks"] + found["segments"])

    passage = tools.read_passage(caller, document=hostile.pk, start=0, end=len(hostile.text))
    assert_plain(passage["text"], hostile.text)
    assert_plain(passage["document"]["title"], TITLE)

    listed = tools.list_collections(caller)["collections"]
    assert_plain(listed[0]["name"], "<i onclick=alert(4)>Guides</i>")


def test_the_schema_says_which_fields_are_markdown_and_which_plain_text(db, admin_user):
    client = Client()
    client.force_login(admin_user)
    schema = client.get("/api/schema/?format=json").json()["components"]["schemas"]

    assert "Markdown" in schema["AskOutput"]["properties"]["answer"]["description"]
    for name, field in [("CitationOutput", "text"), ("DocumentRefOutput", "title"), ("ScoredChunkOutput", "text"),
                        ("SegmentOutput", "text"), ("DocumentOutput", "title"), ("DocumentOutput", "metadata"),
                        ("ChunkOutput", "text"), ("UploadedFileOutput", "name"), ("CollectionOutput", "name"),
                        ("CollectionOutput", "description"), ("CollectionOutput", "reader_groups"),
                        ("InvitationOutput", "invited_by"), ("InvitationCollectionOutput", "name")]:
        assert "Plain text" in schema[name]["properties"][field]["description"], (name, field)


# --- the other REST endpoints: documents, collections, invitations ----------------------------------------

GROUP = "<svg onload=alert(5)>"


def test_documents_are_plain_text_in_the_list_the_detail_and_the_chunks(hostile, client_of, user):
    from corpus.models import Document

    Document.objects.filter(pk=hostile.pk).update(
        error="<img src=x onerror=alert(6)> failed", summary=f"Summary {IMG}",
        metadata={"title": TITLE, "tags": [IMG], "author": "<a href=javascript:alert(7)>me</a>"})
    api = client_of(user)

    listed = api.get("/api/documents/").json()["results"][0]
    detail = api.get(f"/api/documents/{hostile.pk}/").json()
    for body in (listed, detail):
        assert_plain(body["title"], TITLE)
        assert_plain(body["source"], "deploy<script>.md")
        assert_plain(body["error"], "<img src=x onerror=alert(6)> failed")
        assert_plain(body["summary"], f"Summary {IMG}")
        assert_plain(body["metadata"]["title"], TITLE)
        assert_plain(body["metadata"]["tags"][0], IMG)
        assert_plain(body["metadata"]["author"], "<a href=javascript:alert(7)>me</a>")
    chunks = api.get(f"/api/documents/{hostile.pk}/chunks/").json()["results"]
    assert_plain(chunks[1]["text"], PARTS[1])
    assert_plain(chunks[1]["context"], TITLE)


def test_an_upload_answers_in_plain_text(db, client_of, user, settings, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.MEDIA_ROOT = tmp_path
    make_collection("notes", owner=user)
    response = client_of(user).post("/api/documents/", {"collection": "notes", "files": [
        SimpleUploadedFile("<img src=x onerror=alert(8)>.md", b"# Note\n\nText."),
        SimpleUploadedFile("<i onclick=x>bad.exe", b"MZ")]}, format="multipart")

    files = response.json()["files"]
    assert response.status_code == 207
    assert_plain(files[0]["name"], "<img src=x onerror=alert(8)>.md")
    assert_plain(files[0]["document"]["source"], "<img src=x onerror=alert(8)>.md")
    assert "<" not in files[1]["error"] and "&lt;i onclick=x&gt;bad.exe" in files[1]["error"]


def test_collections_are_plain_text_names_descriptions_and_groups(hostile, client_of, user):
    from django.contrib.auth.models import Group

    group = Group.objects.create(name=GROUP)
    user.groups.add(group)
    Collection.objects.filter(pk=hostile.collection_id).update(description=f"About {IMG}")
    api = client_of(user)
    assert api.patch("/api/collections/guides/", {"reader_groups": [GROUP]}, format="json").status_code == 200

    for body in (api.get("/api/collections/").json()["results"][0], api.get("/api/collections/guides/").json()):
        assert_plain(body["name"], "<i onclick=alert(4)>Guides</i>")
        assert_plain(body["description"], f"About {IMG}")
        assert [html.unescape(name) for name in body["reader_groups"]] == [GROUP]
        assert body["reader_groups"] == [html.escape(GROUP, quote=False)]


def test_invitations_are_plain_text(hostile, client_of, user, other_user):
    from corpus import sharing

    sharing.collection_share(collection=hostile.collection, readers=[other_user], sharer=user)

    invitation = client_of(other_user).get("/api/invitations/").json()["results"][0]
    assert_plain(invitation["collection"]["name"], "<i onclick=alert(4)>Guides</i>")
    assert invitation["invited_by"] == "alice"
