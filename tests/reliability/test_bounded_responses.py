"""A hostile document (one 200 KB line without spaces) cannot make search responses huge: its chunks
are bounded in characters, and max_chars bounds the segments."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from accounts.services import token_create
from corpus import services
from corpus.models import Chunk, Collection, Document
from tests.corpus.ingest_helpers import eager_media  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_media")]


@pytest.fixture
def client_with_a_long_line(user, django_capture_on_commit_callbacks):
    collection = Collection.objects.create(slug="shared", name="Shared", owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        services.document_ingest(collection=collection, source="line.txt", filename="line.txt",
                                 data=b"'" + b"x" * 200_000 + b"'\n")
    assert Document.objects.get().status == Document.Status.READY
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
    return client


@pytest.mark.parametrize("body", [
    {"query": "'"},
    {"query": "'", "mode": "vector", "k": 1},
    {"query": "x", "k": 100},
])
def test_search_responses_stay_bounded(client_with_a_long_line, body):
    response = client_with_a_long_line.post("/api/search/", body, format="json")

    assert response.status_code == 200, response.content
    result = response.json()
    assert result["chunks"] or result["segments"]
    assert all(len(c["text"]) <= 3200 for c in result["chunks"])
    k = body.get("k", 10)
    assert len(response.content) < 2 * 3200 * k + 200_000  # chunks and segments, JSON included


def test_max_chars_caps_the_segments(client_with_a_long_line):
    response = client_with_a_long_line.post("/api/search/", {"query": "'", "k": 1, "max_chars": 1000},
                                            format="json")

    assert response.status_code == 200, response.content
    result = response.json()
    assert sum(len(s["text"]) for s in result["segments"]) <= 1000
    assert len(json.dumps(result)) < 3200 + 1000 + 20_000
    assert Chunk.objects.count() > 60
