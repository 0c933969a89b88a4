"""The vector side with chunks outside the HNSW graph (corpus/graph/): the HNSW branch scans them
exactly beside the index, so a document is found the moment it is published and the results are
the same before and after the merge."""

import numpy as np
import pytest
from django.db import connection

from chat.retrieval import tuning
from chat.retrieval.candidates import _MODE_SIDES, _parameters, _statement, fetch_candidates
from chat.retrieval.vector import session_settings_sql
from corpus.graph.merge import graph_merge, graph_tail_size
from corpus.models import Chunk
from tests.chat.factories import make_collection, make_document, random_unit_vectors

K = 10


def _in_graph_collection(name: str, documents: int = 8, per_document: int = 40, seed: int = 1):
    col = make_collection(name)
    vectors = random_unit_vectors(documents * per_document, seed=seed)
    for d in range(documents):
        make_document(col, f"{name}-{d}.txt", [f"c{d}-{i} " for i in range(per_document)],
                      embeddings=vectors[d * per_document:(d + 1) * per_document])
    graph_merge()
    assert graph_tail_size() == 0
    return col


def _search(col, query, candidates: int = K):
    return fetch_candidates(query="x", vector=query, collection_ids=[col.id], mode="vector", candidates=candidates)


def _near(vector: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n unit vectors very close to `vector`."""
    noisy = vector + 0.05 * random_unit_vectors(n, seed=seed)
    return noisy / np.linalg.norm(noisy, axis=1, keepdims=True)


@pytest.mark.django_db
def test_a_document_is_found_by_the_hnsw_branch_the_moment_it_is_published(settings, monkeypatch):
    monkeypatch.setattr(tuning, "EXACT_MAX_CHUNKS", 0)  # the HNSW branch
    col = _in_graph_collection("big")
    query = random_unit_vectors(1, seed=99)[0]
    fresh = make_document(col, "fresh.txt", ["new one ", "new two ", "new three "], embeddings=_near(query, 3, 5))
    assert graph_tail_size() == 3
    found = _search(col, query)
    assert found.vector_scan == "hnsw"
    fresh_ids = set(Chunk.objects.filter(document=fresh).values_list("id", flat=True))
    ranked = sorted(found.candidates, key=lambda c: c.vector_rank)
    assert {c.chunk_id for c in ranked[:3]} == fresh_ids
    assert len(found.candidates) == K


@pytest.mark.django_db(transaction=True)  # VACUUM runs outside a transaction
def test_the_results_are_the_same_before_and_after_the_merge(settings, monkeypatch):
    """Each query's ten nearest chunks stand clear of the rest, six of them in the graph and four in
    the tail: the same ten, in the same order, with the same similarities, before and after."""
    # The graph starts without the entries earlier tests' rolled-back rows left in it (thousands,
    # from tests/chat/retrieval/test_filters.py): the HNSW side is approximate, and those make it
    # miss near chunks that an exact scan of the tail finds.
    with connection.cursor() as cursor:
        cursor.execute("VACUUM corpus_chunk")
    monkeypatch.setattr(tuning, "EXACT_MAX_CHUNKS", 0)
    settings.SEARCH_HNSW_EF = 200
    queries = random_unit_vectors(12, seed=42)
    col = make_collection("big")
    near = [_near(q, 6, seed=100 + i) for i, q in enumerate(queries)]
    in_graph = np.vstack([random_unit_vectors(300, seed=1), *near])
    make_document(col, "graph.txt", [f"g{i} " for i in range(len(in_graph))], embeddings=in_graph)
    graph_merge()
    tail = np.vstack([_near(q, 4, seed=i) for i, q in enumerate(queries)] + [random_unit_vectors(30, seed=8)])
    make_document(col, "tail.txt", [f"t{i} " for i in range(len(tail))], embeddings=tail)
    assert graph_tail_size() == len(tail)
    tail_ids = set(Chunk.objects.filter(document__source="tail.txt").values_list("id", flat=True))

    def results():
        out = []
        for q in queries:
            # As many candidates as a search takes: the iterative scan's relaxed order may hand a
            # far chunk in before a near one, and only the candidates' nearest are what a search keeps.
            found = _search(col, q, tuning.CANDIDATES)
            assert found.vector_scan == "hnsw"
            out.append([(c.vector_rank, c.chunk_id, round(c.similarity, 5)) for c in
                        sorted(found.candidates, key=lambda c: c.vector_rank)][:K])
        return out

    before = results()
    assert all(sum(chunk_id in tail_ids for _, chunk_id, _ in ranked) == 4 for ranked in before)
    assert all(len(ranked) == K and ranked[-1][2] > 0.9 for ranked in before)
    assert graph_merge().merged == len(tail)
    assert results() == before


@pytest.mark.django_db
def test_a_short_graph_side_falls_back_to_the_exact_scan_of_every_chunk(settings, monkeypatch):
    monkeypatch.setattr(tuning, "EXACT_MAX_CHUNKS", 0)
    col = make_collection("fresh")
    make_document(col, "old.txt", ["o1 ", "o2 ", "o3 "], embeddings=random_unit_vectors(3, seed=1))
    graph_merge()
    query = random_unit_vectors(1, seed=7)[0]
    make_document(col, "new.txt", [f"n{i} " for i in range(20)], embeddings=random_unit_vectors(20, seed=2))
    found = _search(col, query)
    assert found.vector_scan == "exact"  # 3 chunks in the graph < K
    all_vectors = {c.id: np.array(c.embedding) for c in Chunk.objects.filter(document__collection=col)}
    exact = sorted(all_vectors, key=lambda i: -float(all_vectors[i] @ query))[:K]
    assert [c.chunk_id for c in sorted(found.candidates, key=lambda c: c.vector_rank)] == exact


@pytest.mark.django_db
def test_the_graph_side_reads_the_partial_index_and_the_tail_its_own(settings, monkeypatch):
    monkeypatch.setattr(tuning, "EXACT_MAX_CHUNKS", 0)
    col = make_collection("plan")
    make_document(col, "a.txt", [f"a{i} " for i in range(30)], embeddings=random_unit_vectors(30))
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'chunk_embedding_hnsw'")
        assert cursor.fetchone()[0].endswith("WHERE in_graph")
        # On a table this small the planner would rather scan and sort; with those off only indexes serve.
        cursor.execute("SET LOCAL enable_sort = off; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off")
        cursor.execute(session_settings_sql())
        cursor.execute("EXPLAIN (COSTS OFF) " + _statement(_MODE_SIDES["vector"]),
                       _parameters("x", random_unit_vectors(1, seed=3)[0], [col.id], K))
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Index Scan using chunk_embedding_hnsw" in plan
    assert "chunk_graph_tail" in plan
