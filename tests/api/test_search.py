"""POST /api/search/: request validation, auth, scoping to readable collections, response shape."""

import json

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient

from accounts.services import token_create
from api.search import SearchOutput
from chat.retrieval.payload import search_payload
from chat.retrieval.search import search
from chat.retrieval.types import DocumentRef, ScoredChunk, SearchResult, Segment
from corpus.ingest.embed import embed_texts
from corpus.models import Collection
from tests.chat.factories import make_collection, make_document

pytestmark = pytest.mark.django_db

PIECES = ["Knead the dough for ten minutes. ", "Bake the loaf for thirty minutes. ", "Bicycles need oil. "]


@pytest.fixture
def setup(user, other_user):
    mine = make_collection("mine", owner=user)
    theirs = make_collection("theirs", owner=other_user)
    make_document(mine, "bread.txt", PIECES, embeddings=embed_texts(PIECES))
    secret = ["Knead the secret dough for an hour. "]
    make_document(theirs, "secret.txt", secret, embeddings=embed_texts(secret))
    client = APIClient()
    token = token_create(user=user)[1]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_search_returns_design_response_with_token_auth(setup):
    response = setup.post("/api/search/", {"query": "how long to knead dough", "k": 2}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"query", "mode", "chunks", "segments", "timings_ms"}
    assert body["query"] == "how long to knead dough" and body["mode"] == "hybrid"
    assert len(body["chunks"]) == 2
    first = body["chunks"][0]
    assert {"document", "chunk_index", "text", "score", "ranks"} <= set(first)
    assert first["text"] == PIECES[0]
    assert set(first["document"]) == {"id", "title", "source"}
    assert set(first["ranks"]) == {"vector", "keyword"}
    for segment in body["segments"]:
        assert {"document", "start", "end", "text", "score"} <= set(segment)
        assert segment["end"] > segment["start"]
    assert {"embed", "candidates", "fusion", "total"} <= set(body["timings_ms"])


def test_search_only_sees_readable_collections(setup):
    body = setup.post("/api/search/", {"query": "knead secret dough", "k": 10}, format="json").json()
    assert {c["document"]["source"] for c in body["chunks"]} == {"bread.txt"}


def test_session_auth_works(user, client, setup):
    client.force_login(user)
    response = client.post("/api/search/", {"query": "bake", "rse": None}, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["segments"] == []


def test_anonymous_is_refused():
    response = APIClient().post("/api/search/", {"query": "bake"}, format="json")
    assert response.status_code in (401, 403)
    assert "detail" in response.json()


@pytest.mark.parametrize("slug", ["theirs", "nonexistent"])
def test_unreadable_or_unknown_collection_is_404(setup, slug):
    response = setup.post("/api/search/", {"query": "dough", "collection": slug}, format="json")
    assert response.status_code == 404
    assert slug in response.json()["detail"]


def test_named_readable_collection_is_searched(setup):
    response = setup.post("/api/search/", {"query": "dough", "collection": "mine", "mode": "keyword"},
                          format="json")
    assert response.status_code == 200
    assert response.json()["mode"] == "keyword"
    assert all(c["ranks"]["vector"] is None for c in response.json()["chunks"])


@pytest.mark.parametrize(("body", "field", "message"), [
    ({}, "query", "required"),
    ({"query": ""}, "query", "empty"),
    ({"query": "   "}, "query", "empty"),
    ({"query": 5}, "query", "must be a string"),
    ({"query": ["a", "b"]}, "query", "must be a string"),
    ({"query": "x", "k": 0}, "k", "from 1 to 100"),
    ({"query": "x", "k": 101}, "k", "from 1 to 100"),
    ({"query": "x", "k": "5"}, "k", "integer"),
    ({"query": "x", "k": True}, "k", "integer"),
    ({"query": "x", "mode": "ts_rank"}, "mode", "mode must be one of"),
    ({"query": "x", "rse": "most"}, "rse", "rse must be one of"),
    ({"query": "x", "colection": "mine"}, "non_field_errors", "Unknown field"),
    ({"query": "x", "max_chars": 100}, "max_chars", "from 500 to"),
    ({"query": "x", "max_chars": "8000"}, "max_chars", "integer"),
])
def test_bad_input_is_400_with_a_message(setup, body, field, message):
    response = setup.post("/api/search/", body, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert message in " ".join(errors[field])


def test_max_chars_trims_the_segments(setup, user):
    tips = [f"Bread tip {i}: knead the dough well, let it rise, then bake the loaf. " for i in range(20)]
    make_document(Collection.objects.get(slug="mine"), "tips.txt", tips, embeddings=embed_texts(tips))
    body = {"query": "How do I knead the dough, let it rise and bake the loaf?", "rse": "find_all"}
    whole = setup.post("/api/search/", body, format="json").json()["segments"]
    fitted = setup.post("/api/search/", body | {"max_chars": 500}, format="json").json()["segments"]
    assert sum(len(s["text"]) for s in whole) > 500
    assert fitted and sum(len(s["text"]) for s in fitted) <= 500


def test_non_object_body_is_400(setup):
    response = setup.post("/api/search/", ["query"], format="json")
    assert response.status_code == 400


def test_a_token_search_is_four_statements_and_the_token_lookup_joins_its_user(setup):
    # Token with its user; the readable collections; the candidates (both sides); the text of the
    # segments and chunks. A fifth (a second permission query, the user loaded on its own, a write
    # of last_used) is a regression: docs/scaling.md, "Searches per second".
    setup.post("/api/search/", {"query": "warm up"}, format="json")  # last_used written once, now fresh
    with CaptureQueriesContext(connection) as captured:
        response = setup.post("/api/search/", {"query": "how long to knead dough", "k": 2}, format="json")
    assert response.status_code == 200
    statements = [q["sql"] for q in captured.captured_queries]
    assert len(statements) == 4, statements
    assert "accounts_apitoken" in statements[0] and '"auth_user"' in statements[0]
    assert "corpus_collection" in statements[1] and "UNION" in statements[1]
    # The readable collections' rows through corpus.permissions.collection_rows' fixed statement, not
    # the ORM's (which orders by name): docs/scaling.md, "Searches per second".
    assert "ORDER BY" not in statements[1]
    assert not any(sql.lstrip().upper().startswith(("UPDATE", "INSERT")) for sql in statements)


def test_search_output_is_what_the_output_serializer_gives(setup):
    # search_payload replaces SearchOutput(result).data on the hot path; the schema is SearchOutput's.
    result = search(query="how long to knead dough", collections=Collection.objects.all(), k=3)
    assert result.chunks and result.segments
    assert search_payload(result) == SearchOutput(result).data
    doc = DocumentRef(7, "Guide", "guide.md")
    nulls = SearchResult(query="q", mode="vector", timings_ms={"total": 1},
                         chunks=[ScoredChunk(chunk_id=1, document=doc, chunk_index=0, text="t", start=0, end=1,
                                             score=np.float32(0.5), relevance=0.25,
                                             ranks={"vector": 1, "keyword": None})],
                         segments=[Segment(document=doc, start=0, end=1, char_start=0, char_end=1, text="t",
                                           score=0.5, page=None)])
    plain = search_payload(nulls)
    assert plain == SearchOutput(nulls).data
    assert plain["chunks"][0]["ranks"] == {"vector": 1, "keyword": None} and plain["segments"][0]["page"] is None
    assert json.loads(JSONRenderer().render(plain)) == plain  # plain JSON types only (no numpy scalars)
