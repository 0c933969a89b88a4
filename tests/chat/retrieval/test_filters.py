"""Metadata filters: parsed and validated in one place (chat.retrieval.filters), applied inside
the candidate statement on both sides, so a filtered HNSW scan still finds the nearest matches."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from django.db import connection

from chat.retrieval import search, tuning
from chat.retrieval.candidates import _MODE_SIDES, _parameters, _statement, fetch_candidates
from chat.retrieval.filters import NO_FILTERS, FilterError, SearchFilters, parse_filters
from chat.retrieval.vector import session_settings_sql
from corpus.ingest.embed import embed_texts
from corpus.models import Chunk, Collection, Document
from tests.chat.factories import make_collection, make_document

GARDEN = ["Tomatoes need sun and water every day in summer. ", "Prune the roses in early spring. "]
BAKING = ["Knead the bread dough until smooth and elastic. ", "Bake the loaf until the crust is golden. "]
COMPOST = ["Compost needs green and brown material in layers. ", "Turn the compost heap every week. "]


def test_a_full_filter_object_is_parsed():
    parsed = parse_filters({"media_type": ["Application/PDF"], "tags": [" garden ", "garden", "beans"],
                            "source_prefix": "handbook/", "after": "2024-01-01", "before": "2025-01-01"})
    assert parsed == SearchFilters(media_types=("application/pdf",), tags=("garden", "beans"),
                                   source_prefix="handbook/", after=date(2024, 1, 1), before=date(2025, 1, 1))
    assert parse_filters(None) == parse_filters({}) == NO_FILTERS and not NO_FILTERS
    assert parse_filters({"tags": "garden", "media_type": None}) == SearchFilters(tags=("garden",))


@pytest.mark.parametrize(("value", "errors"), [
    ("garden", {"filters": ["filters must be an object with the keys media_type, tags, source_prefix, after, "
                            "before."]}),
    ({"colour": "red", "tags": [1]}, {"colour": ["Unknown filter; use media_type, tags, source_prefix, after, "
                                                 "before."], "tags": ["Give a list of tags (strings)."]}),
    ({"media_type": []}, {"media_type": ["Give from 1 to 32 media types."]}),
    ({"media_type": ["pdf"]}, {"media_type": ["A media type looks like type/subtype, e.g. application/pdf."]}),
    ({"tags": ["x" * 65]}, {"tags": ["A tag is at most 64 characters."]}),
    ({"source_prefix": 3}, {"source_prefix": ["source_prefix must be a non-empty string."]}),
    ({"after": "2024-02-30", "before": 20240101}, {"after": ["'2024-02-30' is not a day as YYYY-MM-DD."],
                                                    "before": ["20240101 is not a day as YYYY-MM-DD."]}),
    ({"after": "2024-W01-1"}, {"after": ["'2024-W01-1' is not a day as YYYY-MM-DD."]}),
    ({"after": "2024-05-01", "before": "2024-05-01"}, {"before": ["before must be a later day than after."]}),
])
def test_bad_filters_name_every_bad_key(value, errors):
    with pytest.raises(FilterError) as caught:
        parse_filters(value)
    assert caught.value.errors == errors


def _doc(collection, source, pieces, *, media_type, tags, modified):
    document = make_document(collection, source, pieces, embeddings=embed_texts(pieces))
    Document.objects.filter(pk=document.pk).update(media_type=media_type, metadata={
        "media_type": media_type, "tags": tags, "path": source, "created": "2020-01-01T00:00:00Z",
        "modified": modified})
    return document


@pytest.fixture
def shelf():
    collection = make_collection("shelf")
    return {
        "garden": _doc(collection, "handbook/garden.md", GARDEN, media_type="text/markdown",
                       tags=["garden", "summer"], modified="2024-03-10T12:00:00Z"),
        "baking": _doc(collection, "recipes/bread.pdf", BAKING, media_type="application/pdf", tags=["kitchen"],
                       modified="2023-11-30T23:59:59Z"),
        "compost": _doc(collection, "handbook/compost.pdf", COMPOST, media_type="application/pdf",
                        tags=["garden"], modified="2025-01-01T00:00:00Z"),
    }


def _found(filters: dict, mode: str, query: str = "summer roses, bread and compost") -> set[str]:
    result = search(query=query, collections=Collection.objects.all(), mode=mode, k=20, rse=None,
                    filters=parse_filters(filters))
    return {c.document.source for c in result.chunks}


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
@pytest.mark.parametrize(("filters", "expected"), [
    ({}, {"handbook/garden.md", "recipes/bread.pdf", "handbook/compost.pdf"}),
    ({"media_type": ["application/pdf"]}, {"recipes/bread.pdf", "handbook/compost.pdf"}),
    ({"media_type": "text/markdown"}, {"handbook/garden.md"}),
    ({"tags": ["garden"]}, {"handbook/garden.md", "handbook/compost.pdf"}),
    ({"tags": ["kitchen", "summer"]}, {"handbook/garden.md", "recipes/bread.pdf"}),
    ({"source_prefix": "handbook/"}, {"handbook/garden.md", "handbook/compost.pdf"}),
    ({"after": "2024-03-10"}, {"handbook/garden.md", "handbook/compost.pdf"}),  # the day itself counts
    ({"before": "2024-03-10"}, {"recipes/bread.pdf"}),
    ({"after": "2024-01-01", "before": "2025-01-01"}, {"handbook/garden.md"}),
    ({"media_type": ["application/pdf"], "tags": ["garden"]}, {"handbook/compost.pdf"}),
])
def test_each_filter_returns_only_matching_chunks(shelf, mode, filters, expected):
    assert _found(filters, mode) == expected


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_a_filter_matching_nothing_gives_an_empty_result(shelf, mode):
    for filters in ({"tags": ["no-such-tag"]}, {"source_prefix": "elsewhere/"}, {"after": "2030-01-01"},
                    {"media_type": ["application/pdf"], "source_prefix": "handbook/garden"}):
        result = search(query="garden", collections=Collection.objects.all(), mode=mode, filters=parse_filters(filters))
        assert result.chunks == [] and result.segments == []


@pytest.mark.django_db
def test_the_segments_come_from_matching_documents_only(shelf):
    query = "Turn the compost heap and knead the bread dough"
    unfiltered = search(query=query, collections=Collection.objects.all())
    assert "recipes/bread.pdf" in {s.document.source for s in unfiltered.segments}
    result = search(query=query, collections=Collection.objects.all(), filters=parse_filters({"tags": ["garden"]}))
    found = {s.document.source for s in result.segments}
    assert "handbook/compost.pdf" in found and found <= {"handbook/compost.pdf", "handbook/garden.md"}


def _clustered_vectors(n: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    """Unit vectors around random centres: embeddings are clustered by topic, not uniform."""
    picked = centres[rng.integers(0, len(centres), n)]
    v = picked + 0.35 * rng.standard_normal((n, centres.shape[1])).astype(np.float32) / np.sqrt(centres.shape[1]) * 8
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.django_db
def test_a_filtered_hnsw_search_finds_what_an_exact_search_finds(settings, monkeypatch):
    """4,000 chunks in 100 documents, the filter matching one of them (1%): the HNSW side (not the
    exact one, which would be perfect by construction) must still return the filtered nearest chunks."""
    monkeypatch.setattr(tuning, "EXACT_MAX_CHUNKS", 100)  # force the index path
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((40, 384)).astype(np.float32)
    collection = make_collection("synthetic")
    per_document, documents = 40, 100
    vectors = _clustered_vectors(per_document * documents, rng, centres)
    docs = Document.objects.bulk_create([
        Document(collection=collection, source=f"doc{i:03}.txt", title=f"doc {i}", status=Document.Status.READY,
                 metadata={"tags": ["rare"] if i == 37 else ["common"]})
        for i in range(documents)])
    Chunk.objects.bulk_create([
        Chunk(document=docs[i // per_document], chunk_index=i % per_document, text=f"chunk {i}", start=0, end=7,
              embedding=[float(x) for x in vectors[i]], in_graph=True)  # in the HNSW graph (corpus/graph/)
        for i in range(len(vectors))], batch_size=1000)
    rare = vectors[37 * per_document: 38 * per_document]
    rare_ids = list(Chunk.objects.filter(document=docs[37]).order_by("chunk_index").values_list("id", flat=True))
    k, recalls = 10, []
    rare_filter = SearchFilters(tags=("rare",))
    # The index is what is measured: with fresh statistics and a filter this narrow, Postgres may
    # rightly plan the exact route through the one matching document instead (perfect and cheap).
    assert "chunk_embedding_hnsw" in _vector_plan(vectors[0], collection.id, k, rare_filter)
    for query in _clustered_vectors(20, rng, centres):
        exact = {rare_ids[i] for i in np.argsort(-(rare @ query))[:k]}
        found = fetch_candidates(query="x", vector=query, collection_ids=[collection.id], mode="vector",
                                 candidates=k, filters=rare_filter)
        assert found.vector_scan == "hnsw"
        assert {c.chunk_id for c in found.candidates} <= set(rare_ids)
        recalls.append(len(exact & {c.chunk_id for c in found.candidates}) / k)
    assert np.mean(recalls) >= 0.9, recalls


def _vector_plan(vector, collection_id: int, k: int, filters: SearchFilters) -> str:
    params = {**_parameters("x", vector, [collection_id], k), **filters.parameters()}
    with connection.cursor() as cursor:
        cursor.execute(session_settings_sql())
        cursor.execute("EXPLAIN " + _statement(_MODE_SIDES["vector"], filters.document_condition("d")), params)
        return "\n".join(row[0] for row in cursor.fetchall())
