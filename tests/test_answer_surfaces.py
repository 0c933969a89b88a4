"""One way through: the same question asked on the chat page, POST /api/ask/, /v1 (streamed and
not) and MCP's ask gets the same answer and the same citations, because every surface calls the
one answer service (chat.services.answer_run) and only translates its result."""

from __future__ import annotations

import json

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse

from accounts.services import token_create
from chat.answering.grounding import UNSUPPORTED_NOTE
from chat.models import Message
from mcp_server.tools import Caller
from mcp_server.tools import ask as mcp_ask
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

QUESTION = "What is the default request timeout?"
# Three lines: one well cited, one citing a source that does not exist, one no source supports.
LLM_ANSWER = ("The request timeout is thirty seconds by default [1].\n"
              "Failed requests are retried twice with exponential backoff [9].\n"
              "The moon is made of green cheese and tastes of strawberries on Tuesdays.")


@pytest.fixture
def guide(db, user):
    return make_document(make_collection("guides", owner=user), source="deploy.md", title="Deployment guide",
                         parts=GUIDE)


def _key(citation: dict) -> tuple:
    return citation["n"], citation["document"]["id"], citation["start"], citation["end"], citation["text"]


def via_chat(user) -> tuple[str, list]:
    client = Client()
    client.force_login(user)
    client.post(reverse("chat:ask"), {"question": QUESTION, "collection": "guides"})
    reply = Message.objects.filter(role=Message.Role.ASSISTANT).latest("pk")
    return reply.content, [_key(c) for c in reply.citations]


def via_api_ask(key: str) -> tuple[str, list]:
    body = Client().post("/api/ask/", {"question": QUESTION, "collection": "guides"}, content_type="application/json",
                         HTTP_AUTHORIZATION=f"Token {key}").json()
    return body["answer"], [_key(c) for c in body["citations"]]


def via_v1(key: str, *, stream: bool) -> tuple[str, list]:
    response = Client().post("/v1/chat/completions", {"model": "ragweb/guides", "stream": stream,
                                                      "messages": [{"role": "user", "content": QUESTION}]},
                             content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}")
    if not stream:
        body = response.json()
        return body["choices"][0]["message"]["content"], [_key(c) for c in body["citations"]]
    events = [line.removeprefix("data: ") for line in b"".join(response.streaming_content).decode().split("\n\n")
              if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    return text, [_key(c) for c in chunks[-1]["citations"]]


def via_mcp(user) -> tuple[str, list]:
    request = RequestFactory().post("/mcp")
    request.user = user
    answered = mcp_ask(Caller(request), question=QUESTION, collection="guides")
    return answered["answer"], [_key(c) for c in answered["citations"]]


def every_surface(user) -> dict[str, tuple[str, list]]:
    key = token_create(user=user)[1]
    return {"chat": via_chat(user), "api/ask": via_api_ask(key), "v1": via_v1(key, stream=False),
            "v1 streamed": via_v1(key, stream=True), "mcp": via_mcp(user)}


def test_every_surface_gives_the_same_extractive_answer(guide, user, no_llm):
    answers = every_surface(user)

    text, citations = answers["chat"]
    assert "thirty seconds" in text and citations and citations[0][1] == guide.pk
    assert answers == {surface: (text, citations) for surface in answers}


def test_every_surface_gives_the_same_grounded_llm_answer(guide, user, fake_llm):
    fake_llm.reply = lambda request: LLM_ANSWER
    answers = every_surface(user)

    text, citations = answers["chat"]
    assert "[9]" not in text  # the grounding pass removed the citation of no source...
    assert text.endswith(UNSUPPORTED_NOTE)  # ...and marked the answer partly unsupported
    assert "thirty seconds by default [1]" in text and citations
    assert answers == {surface: (text, citations) for surface in answers}
