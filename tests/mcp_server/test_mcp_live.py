"""/mcp through the official MCP client (the SDK's streamable HTTP client and ClientSession)
against the running test server: the handshake, the tools' results with an owner's token, what a
stranger's token sees, and the tokens refused before any tool runs."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from datetime import timedelta
from urllib.parse import urlsplit

import httpx2
import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone
from mcp import Client as McpClient
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from accounts.services import token_create
from tests.chat.chat_corpus import COOKING, GUIDE, make_collection, make_document

TOOLS = {"list_collections", "search", "ask", "read_passage"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
JSON_RPC_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def corpus(transactional_db, user, other_user):
    guides = make_collection("guides", owner=user, description="How to deploy")
    document = make_document(guides, source="deploy.md", title="Deployment guide", parts=GUIDE)
    make_document(make_collection("kitchen", owner=other_user), source="bread.md", parts=COOKING)
    return document


@asynccontextmanager
async def session_for(url: str, key: str):
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http,
                streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
                ClientSession(read, write) as session):
        await session.initialize()
        yield session


def call(live_server, key: str, name: str, **arguments):
    """The result of one tools/call, through a fresh MCP session."""
    async def run():
        async with session_for(live_server.url, key) as session:
            return await session.call_tool(name, arguments)
    return asyncio.run(run())


def structured(result) -> dict:
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content  # the text is the same JSON
    return result.structured_content


def error_text(result, tool: str) -> str:
    """The message of a tool error (the SDK puts "Error executing tool NAME: " before it)."""
    assert result.is_error and result.structured_content is None
    prefix = f"Error executing tool {tool}: "
    assert result.content[0].text.startswith(prefix), result.content[0].text
    return result.content[0].text.removeprefix(prefix)


def opened_by(user, url: str, live_server):
    """The web page of a result's absolute link, as `user` signed in sees it."""
    assert url.startswith(live_server.url + "/")
    parts = urlsplit(url)
    client = Client()
    client.force_login(user)
    return client.get(f"{parts.path}?{parts.query}" if parts.query else parts.path)


def test_it_initializes_and_lists_the_four_read_only_tools(live_server, corpus, user):
    key = token_create(user=user)[1]

    async def run():
        async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as http,
                    streamable_http_client(f"{live_server.url}/mcp", http_client=http) as (read, write),
                    ClientSession(read, write) as session):
            initialized = await session.initialize()
            return initialized, await session.list_tools()

    initialized, listed = asyncio.run(run())
    assert initialized.server_info.name == "ragweb"
    assert "list_collections" in initialized.instructions
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == TOOLS
    assert all(tool.annotations.read_only_hint for tool in tools.values())
    assert tools["search"].input_schema["required"] == ["query"]
    assert set(tools["search"].input_schema["properties"]) == {"query", "collection", "k", "filters"}
    assert tools["read_passage"].input_schema["required"] == ["document", "start", "end"]
    assert tools["ask"].input_schema["required"] == ["question"]
    assert set(tools["ask"].input_schema["properties"]) == {"question", "collection", "filters"}


def test_the_sdks_high_level_client_works_too(live_server, corpus, user):
    """mcp.Client probes the newer stateless protocol revision first and falls back to the handshake."""
    key = token_create(user=user)[1]

    async def run():
        async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http,
                    McpClient(streamable_http_client(f"{live_server.url}/mcp", http_client=http)) as client):
            return client.protocol_version, await client.list_tools(), await client.call_tool("list_collections", {})

    version, listed, collections = asyncio.run(run())
    assert version
    assert {tool.name for tool in listed.tools} == TOOLS
    assert [c["slug"] for c in structured(collections)["collections"]] == ["guides"]


def test_list_collections_shows_what_the_token_owner_may_read(live_server, corpus, user, other_user):
    listed = structured(call(live_server, token_create(user=user)[1], "list_collections"))
    assert listed == {"collections": [{"slug": "guides", "name": "Guides", "description": "How to deploy",
                                       "public": False}]}
    others = structured(call(live_server, token_create(user=other_user)[1], "list_collections"))
    assert [c["slug"] for c in others["collections"]] == ["kitchen"]


def test_search_finds_the_chunk_and_links_to_its_passage(live_server, corpus, user):
    found = structured(call(live_server, token_create(user=user)[1], "search",
                            query="What is the default request timeout?", collection="guides", k=3))
    best = found["chunks"][0]
    assert best["document"] == {"id": corpus.pk, "title": "Deployment guide", "source": "deploy.md"}
    assert best["chunk_index"] == 2 and best["text"] == GUIDE[2]
    assert corpus.text[best["start"]:best["end"]] == GUIDE[2]
    assert len(found["chunks"]) == 3
    segment = found["segments"][0]
    assert GUIDE[2] in segment["text"] and corpus.text[segment["char_start"]:segment["char_end"]] == segment["text"]
    assert segment["text"] == "".join(GUIDE[segment["start"]:segment["end"]])  # a chunk range, as REST's
    page = opened_by(user, best["url"], live_server)
    assert page.status_code == 200
    assert '<div class="passage segment" id="passage"><h2>Request timeout</h2>' in page.content.decode()


def test_search_is_the_rest_apis_search_with_links(live_server, corpus, user):
    """The same shape as POST /api/search/ (the same output serializer), chunk_id and ranks kept;
    MCP only adds each chunk's and segment's link."""
    key = token_create(user=user)[1]
    found = structured(call(live_server, key, "search", query="What is the default request timeout?", k=3))
    rest = Client().post("/api/search/", {"query": "What is the default request timeout?", "k": 3},
                         content_type="application/json", HTTP_AUTHORIZATION=f"Token {key}").json()

    def unlinked(body: dict) -> dict:
        return {"query": body["query"], "mode": body["mode"],
                "chunks": [{k: v for k, v in c.items() if k != "url"} for c in body["chunks"]],
                "segments": [{k: v for k, v in s.items() if k != "url"} for s in body["segments"]]}

    assert unlinked(found) == unlinked(rest)
    assert found["chunks"][0]["chunk_id"] and found["chunks"][0]["ranks"]["vector"] == 1
    assert all(item["url"].startswith(live_server.url + "/") for item in found["chunks"] + found["segments"])


def test_search_applies_the_metadata_filters(live_server, corpus, user):
    key = token_create(user=user)[1]
    none = structured(call(live_server, key, "search", query="request timeout",
                           filters={"source_prefix": "handbook/"}))
    assert none["chunks"] == [] and none["segments"] == []
    some = structured(call(live_server, key, "search", query="request timeout", filters={"source_prefix": "dep"}))
    assert some["chunks"][0]["document"]["source"] == "deploy.md"


def test_ask_answers_with_a_citation_whose_link_opens_the_passage(live_server, corpus, user, no_llm):
    answered = structured(call(live_server, token_create(user=user)[1], "ask",
                               question="What is the default request timeout?"))
    assert "thirty seconds" in answered["answer"] and "[1]" in answered["answer"]
    assert answered["mode"] == "extractive" and answered["error"] == ""
    first = answered["citations"][0]
    assert first["n"] == 1 and first["document"]["id"] == corpus.pk
    assert corpus.text[first["char_start"]:first["char_end"]] == first["text"]
    page = opened_by(user, first["url"], live_server)
    assert page.status_code == 200
    assert "thirty seconds" in page.content.decode() and 'id="passage"' in page.content.decode()


def test_ask_outside_the_filters_finds_nothing_and_says_so(live_server, corpus, user, no_llm):
    answered = structured(call(live_server, token_create(user=user)[1], "ask",
                               question="What is the default request timeout?", filters={"media_type": ["text/html"]}))
    assert answered["answer"] == "" and answered["citations"] == []
    assert answered["status"] == "not_found" and answered["error"]


def test_read_passage_returns_the_exact_text(live_server, corpus, user):
    key = token_create(user=user)[1]
    start = len(GUIDE[0]) + len(GUIDE[1])
    passage = structured(call(live_server, key, "read_passage", document=corpus.pk, start=start,
                              end=start + len(GUIDE[2])))
    assert passage["text"] == GUIDE[2]
    assert (passage["start"], passage["end"], passage["length"]) == (start, start + len(GUIDE[2]), len(corpus.text))
    tail = structured(call(live_server, key, "read_passage", document=corpus.pk, start=start, end=10**6 - 1))
    assert tail["text"] == "".join(GUIDE[2:]) and tail["end"] == len(corpus.text)
    assert opened_by(user, passage["url"], live_server).status_code == 200


@pytest.mark.parametrize(("arguments", "message"), [
    ({"start": 5, "end": 5}, "end must be greater than start."),
    ({"start": -1, "end": 5}, "start must be 0 or more."),
    ({"start": 10_000, "end": 10_005}, "start is past the end of the document"),
])
def test_read_passage_refuses_bad_offsets_with_a_message(live_server, corpus, user, arguments, message):
    result = call(live_server, token_create(user=user)[1], "read_passage", document=corpus.pk, **arguments)
    assert error_text(result, "read_passage").startswith(message)


@pytest.mark.parametrize(("name", "arguments", "message"), [
    ("search", {"query": "  "}, "The query is empty."),
    ("search", {"query": "timeout", "k": 0}, "k"),
    ("search", {"query": "timeout", "filters": {"media_type": "pdf", "colour": 1}}, "filters.colour: Unknown filter"),
    ("search", {"query": "timeout", "filters": {"after": "yesterday"}}, "filters.after"),
    ("search", {"query": "time\x00out"}, "The query contains a NUL character."),
    ("search", {"query": "timeout", "collection": "gui\x00des"}, "The collection contains a NUL character."),
    ("ask", {"question": " "}, "Please type a question."),
    ("ask", {"question": "What is the timeout?", "collection": "x\x00"}, "The collection contains a NUL"),
    ("read_passage", {"document": "first", "start": 0, "end": 5}, "document"),
])
def test_bad_arguments_are_tool_errors_with_a_message(live_server, corpus, user, name, arguments, message):
    text = error_text(call(live_server, token_create(user=user)[1], name, **arguments), name)
    assert message in text


def test_a_strangers_token_sees_nothing_of_the_owners(live_server, corpus, django_user_model):
    stranger = django_user_model.objects.create_user(username="mallory", password="mallory-password-1")
    key = token_create(user=stranger)[1]

    def refusal(name: str, **arguments) -> str:
        return error_text(call(live_server, key, name, **arguments), name)

    assert structured(call(live_server, key, "list_collections")) == {"collections": []}
    assert structured(call(live_server, key, "search", query="request timeout"))["chunks"] == []
    # The owner's document and collection are refused in the words used for ones that do not exist.
    missing = corpus.pk + 1000
    assert refusal("read_passage", document=corpus.pk, start=0, end=10) == f"No document {corpus.pk} that you may read."
    assert refusal("read_passage", document=missing, start=0, end=10) == f"No document {missing} that you may read."
    assert refusal("search", query="timeout", collection="guides") == "No collection 'guides' that you may read."
    assert refusal("search", query="timeout", collection="nope") == "No collection 'nope' that you may read."
    assert refusal("ask", question="What is the timeout?", collection="guides") == \
        "No collection 'guides' that you may read."


def test_read_passage_reads_at_most_20000_characters_a_call(live_server, transactional_db, user):
    long = make_document(make_collection("books", owner=user), source="long.txt", media_type="text/plain",
                         parts=["word " * 5_000, "more " * 2_000])
    key = token_create(user=user)[1]
    assert len(structured(call(live_server, key, "read_passage", document=long.pk, start=0, end=20_000))["text"]) \
        == 20_000
    refused = call(live_server, key, "read_passage", document=long.pk, start=0, end=20_001)
    assert error_text(refused, "read_passage") == "A passage is at most 20000 characters: read it in several calls."


def test_a_read_only_token_may_use_every_tool(live_server, corpus, user, no_llm):
    key = token_create(user=user, read_only=True)[1]
    assert structured(call(live_server, key, "list_collections"))["collections"][0]["slug"] == "guides"
    assert structured(call(live_server, key, "search", query="request timeout"))["chunks"]
    assert "thirty seconds" in structured(call(live_server, key, "ask", question="What is the request timeout?"))[
        "answer"]
    assert structured(call(live_server, key, "read_passage", document=corpus.pk, start=0, end=7))["text"] == \
        GUIDE[0][:7]


def post(live_server, headers: dict, body: bytes | None = None):
    return httpx2.post(f"{live_server.url}/mcp", headers={**JSON_RPC_HEADERS, **headers},
                       content=body if body is not None else json.dumps(INITIALIZE).encode(), timeout=60)


def test_no_bad_revoked_or_expired_token_is_refused_with_401(live_server, corpus, user):
    token, key = token_create(user=user, expires=timezone.now() + timedelta(days=1))
    assert post(live_server, {"Authorization": f"Bearer {key}"}).status_code == 200

    missing = post(live_server, {})
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"].startswith("Bearer")
    assert post(live_server, {"Authorization": "Bearer not-a-key"}).json() == {"detail": "Invalid token."}
    token.expires = timezone.now() - timedelta(minutes=1)
    token.save()
    expired = post(live_server, {"Authorization": f"Bearer {key}"})
    assert expired.status_code == 401 and "This token expired" in expired.json()["detail"]
    token.delete()
    assert post(live_server, {"Authorization": f"Bearer {key}"}).status_code == 401


def test_the_official_client_cannot_initialize_without_a_valid_token(live_server, corpus):
    async def run():
        async with session_for(live_server.url, "not-a-key"):
            pass

    with pytest.raises(ExceptionGroup) as raised:
        asyncio.run(run())
    assert raised.group_contains(MCPError, match="Server returned an error response", depth=2)


def test_transport_errors_have_proper_statuses(live_server, corpus, user, settings):
    key = token_create(user=user)[1]
    auth = {"Authorization": f"Bearer {key}"}
    for method in ("GET", "DELETE"):  # stateless: no stream to open, no session to end
        refused = httpx2.request(method, f"{live_server.url}/mcp", headers=auth, timeout=30)
        assert refused.status_code == 405 and refused.headers["Allow"] == "POST, OPTIONS"
    assert httpx2.get(f"{live_server.url}/mcp", timeout=30).status_code == 401
    assert post(live_server, auth, b"{not json").status_code == 400
    too_large = post(live_server, auth, b" " * (settings.API_MAX_JSON_BYTES + 1))
    assert too_large.status_code == 413 and "API_MAX_JSON_BYTES" in too_large.json()["error"]["message"]


def test_search_and_ask_draw_on_the_apis_per_user_budgets(live_server, corpus, user, settings, no_llm):
    settings.API_THROTTLE_RATES = {"search": "1/min", "ask": "1/hour"}
    cache.clear()
    key = token_create(user=user)[1]
    try:
        assert not call(live_server, key, "search", query="request timeout").is_error
        assert error_text(call(live_server, key, "search", query="request timeout"), "search").startswith(
            "Too many requests: try again in ")
        assert not call(live_server, key, "ask", question="What is the request timeout?").is_error
        assert error_text(call(live_server, key, "ask", question="What is the request timeout?"), "ask").startswith(
            "Too many requests: try again in ")
        assert not call(live_server, key, "read_passage", document=corpus.pk, start=0, end=5).is_error  # no budget
    finally:
        cache.clear()
