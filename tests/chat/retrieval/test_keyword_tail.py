"""The keyword side with chunks outside the HNSW graph (corpus 0017): they have no BM25 postings
until the merge, and keyword search scores them exactly from their tsvectors, so a document is found
the moment it is published and its scores are the same before and after the merge."""

import pytest
from django.db import connection

from chat.retrieval.candidates import fetch_candidates
from corpus.graph.merge import graph_merge, graph_merge_batch, graph_tail_size
from corpus.models import Chunk, Document
from tests.chat.factories import make_collection, make_document, random_unit_vectors

GARDEN = ["compost heap turned weekly ", "bread dough kneaded slowly ", "tomatoes ripen in the sun ",
          "the compost feeds the tomatoes ", "sourdough bread needs a starter ", "weekly watering of tomatoes "]


def _rows(sql: str, params=()) -> set:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return set(cursor.fetchall())


def _postings() -> set:
    return _rows("SELECT chunk_id, collection_id, lexeme, tf, len FROM bm25_posting")


def _expected_postings() -> set:
    """What the postings must be: every lexeme of every chunk in the graph, none of the tail's."""
    return _rows("SELECT c.id, d.collection_id, u.lexeme, coalesce(array_length(u.positions, 1), 1), "
                 "length(c.search) FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id, "
                 "unnest(c.search) AS u WHERE c.in_graph")


def _expected_term_stats() -> set:
    """The statistics count every chunk, published or merged."""
    return _rows("SELECT d.collection_id, u.lexeme, count(*) FROM corpus_chunk c "
                 "JOIN corpus_document d ON d.id = c.document_id, unnest(c.search) AS u GROUP BY 1, 2")


def _assert_consistent() -> None:
    assert _postings() == _expected_postings()
    assert _rows("SELECT collection_id, lexeme, df FROM bm25_term_stats") == _expected_term_stats()


def _keyword(col, query: str, mode: str = "keyword") -> list[tuple]:
    found = fetch_candidates(query=query, vector=random_unit_vectors(1, seed=5)[0], collection_ids=[col.id],
                             mode=mode, candidates=20)
    ranked = sorted((c for c in found.candidates if c.keyword_rank), key=lambda c: c.keyword_rank)
    return [(c.keyword_rank, c.chunk_id, round(c.bm25, 9)) for c in ranked]


def _chunk_ids(document: Document) -> set[int]:
    return set(Chunk.objects.filter(document=document).values_list("id", flat=True))


@pytest.mark.django_db
def test_a_document_is_found_by_keyword_search_the_moment_it_is_published():
    col = make_collection("kw-tail")
    make_document(col, "old.txt", GARDEN, embeddings=random_unit_vectors(len(GARDEN)))
    graph_merge()
    fresh = make_document(col, "fresh.txt", ["zucchini glut in august ", "pickled zucchini jars "],
                          embeddings=random_unit_vectors(2, seed=2))
    assert graph_tail_size() == 2
    assert not _rows("SELECT 1 FROM bm25_posting WHERE chunk_id = ANY(%s)", [list(_chunk_ids(fresh))])
    found = _keyword(col, "zucchini")
    assert {chunk_id for _, chunk_id, _ in found} == _chunk_ids(fresh)
    assert all(score > 0 for *_, score in found)
    _assert_consistent()


@pytest.mark.django_db
def test_keyword_results_and_scores_are_the_same_before_and_after_the_merge():
    col = make_collection("kw-same")
    make_document(col, "merged.txt", GARDEN, embeddings=random_unit_vectors(len(GARDEN), seed=1))
    graph_merge()
    make_document(col, "tail.txt", ["compost and tomatoes ", "bread bread bread ", "a starter for sourdough ",
                                    "nothing here "], embeddings=random_unit_vectors(4, seed=3))
    make_document(col, "half.txt", ["weekly compost ", "sun on tomatoes ", "dough rises "],
                  embeddings=random_unit_vectors(3, seed=4))
    queries = ["compost tomatoes", "bread", "weekly sourdough starter", "sun", "unknownword"]
    modes = ("keyword", "hybrid")
    before = {(q, m): _keyword(col, q, m) for q in queries for m in modes}
    # Chunks of both kinds rank: the tail's are not set apart.
    tail = _rows("SELECT id FROM corpus_chunk WHERE NOT in_graph")
    assert any((cid,) in tail for _, cid, _ in before[("compost tomatoes", "keyword")])
    assert any((cid,) not in tail for _, cid, _ in before[("compost tomatoes", "keyword")])
    assert before[("unknownword", "keyword")] == []
    assert graph_merge_batch(batch=4) == 4  # partly merged
    _assert_consistent()
    assert {(q, m): _keyword(col, q, m) for q in queries for m in modes} == before
    graph_merge()
    assert graph_tail_size() == 0
    _assert_consistent()
    assert {(q, m): _keyword(col, q, m) for q in queries for m in modes} == before


@pytest.mark.django_db
def test_deleting_or_republishing_tail_or_partly_merged_documents_leaves_no_stray_postings():
    col = make_collection("kw-stray")
    tail_doc = make_document(col, "tail.txt", GARDEN[:3], embeddings=random_unit_vectors(3, seed=1))
    half_doc = make_document(col, "half.txt", GARDEN[3:], embeddings=random_unit_vectors(3, seed=2))
    # Merge the oldest document and one chunk of the second: tail.txt in the graph, half.txt partly.
    graph_merge_batch(batch=4)
    assert Chunk.objects.filter(document=half_doc, in_graph=True).count() == 1
    tail_doc_again = make_document(col, "tail2.txt", ["fresh tail chunk "], embeddings=random_unit_vectors(1))
    _assert_consistent()
    # Republish half.txt as the pipeline does: its old chunks deleted, new ones inserted (in the tail).
    Chunk.objects.filter(document=half_doc).delete()
    Chunk.objects.bulk_create(Chunk(document=half_doc, chunk_index=i, text=t, start=0, end=len(t))
                              for i, t in enumerate(["marrows ", "beans "]))
    _assert_consistent()
    tail_doc_again.delete()  # a document wholly in the tail
    _assert_consistent()
    # Text edits: a merged chunk's postings follow the text; a tail chunk still has none.
    merged_chunk = Chunk.objects.filter(document=tail_doc, in_graph=True).first()
    tail_chunk = Chunk.objects.filter(document=half_doc).first()
    for chunk in (merged_chunk, tail_chunk):
        Chunk.objects.filter(pk=chunk.pk).update(text="cucumbers ripen ")
    _assert_consistent()
    assert _rows("SELECT lexeme FROM bm25_posting WHERE chunk_id = %s", [merged_chunk.pk]) == {("cucumb",),
                                                                                               ("ripen",)}
    graph_merge()
    _assert_consistent()
    half_doc.delete()
    tail_doc.delete()
    assert _postings() == set()
    _assert_consistent()
