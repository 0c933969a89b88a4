"""The attack round after issue 40's fixes: what the reliability harness does not cover.

A collection's name is the owner's text; the "nothing found" message names the collection it
searched, and that message is the /v1 completion's content and /api/ask/'s `error`."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.services import token_create
from corpus.models import Collection
from tests.chat.chat_corpus import make_collection, make_document

NAME = "<img src=x onerror=alert(4)>Guides"
PARTS = ["# Deployment\n\nThis guide explains how to deploy the service on one machine.\n\n"]
UNRELATED = "zebra quagga okapi giraffe savanna migration"


@pytest.fixture
def hostile(db, user):
    collection = make_collection("guides", owner=user)
    Collection.objects.filter(pk=collection.pk).update(name=NAME)
    return make_document(collection, source="deploy.md", title="Deployment", parts=PARTS)


@pytest.fixture
def key(user):
    return token_create(user=user)[1]


@pytest.mark.parametrize("stream", [False, True])
def test_v1_not_found_message_does_not_carry_the_collection_names_markup(hostile, key, no_llm, stream):
    response = Client().post("/v1/chat/completions", {"model": "ragweb", "stream": stream,
                                                      "messages": [{"role": "user", "content": UNRELATED}]},
                             content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}")
    if stream:
        chunks = [json.loads(e.removeprefix("data: ")) for e in b"".join(response.streaming_content).decode()
                  .split("\n\n") if e.startswith("data: {")]
        content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    else:
        content = response.json()["choices"][0]["message"]["content"]
    assert "Guides" in content  # the not-found message, naming the collection
    assert "<img" not in content


def test_api_ask_error_does_not_carry_the_collection_names_markup(hostile, key, no_llm):
    body = Client().post("/api/ask/", {"question": UNRELATED}, content_type="application/json",
                         HTTP_AUTHORIZATION=f"Token {key}").json()
    assert "Guides" in body["error"]
    assert "<img" not in body["error"]
