import math
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from chat.retrieval import tuning
from chat.retrieval.candidates import fetch_candidates
from corpus.graph.merge import graph_merge
from corpus.models import Chunk, Collection
from tests.chat.factories import make_collection, make_document, random_unit_vectors

pytestmark = pytest.mark.django_db

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Foxes are quick; a fox hunts at night. Foxes hide in dens.",
    "Dogs guard houses. A dog barks at a fox.",
    "Databases store rows in tables and indexes speed up queries.",
    "An index on a table makes queries fast; the query planner picks indexes.",
]
ANY_VECTOR = [1.0] + [0.0] * 383


def _lexemes(chunk_id: int) -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT u.lexeme, array_length(u.positions, 1) FROM corpus_chunk c, unnest(c.search) u "
                       "WHERE c.id = %s", [chunk_id])
        return dict(cursor.fetchall())


def _query_lexemes(query: str) -> list[str]:
    """The english configuration's lexemes, and each underscore identifier whole, lower-cased and
    without its underscores (as the chunks' tsvector has them)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT lexeme FROM unnest(to_tsvector('english', %s))", [query])
        words = [r[0] for r in cursor.fetchall()]
    return words + [m.replace("_", "").lower() for m in re.findall(r"[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+", query)]


def _reference_bm25(collections: list[Collection], query: str, k1: float, b: float) -> dict[int, float]:
    """Okapi BM25 computed in Python from each chunk's lexeme counts."""
    chunks = list(Chunk.objects.filter(document__collection__in=collections).values_list("id", flat=True))
    tf = {cid: _lexemes(cid) for cid in chunks}
    n = len(chunks)
    avglen = sum(len(t) for t in tf.values()) / n  # length = distinct lexemes
    terms = _query_lexemes(query)
    scores = {}
    for cid, counts in tf.items():
        length = len(counts)
        score = 0.0
        for term in set(terms):
            if term not in counts:
                continue
            df = sum(1 for c in tf.values() if term in c)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            f = counts[term]
            score += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / avglen))
        if score:
            scores[cid] = score
    return scores


def _expected_stats() -> tuple[dict, dict]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT d.collection_id, count(*), sum(bm25_length(c.search)) FROM corpus_chunk c "
                       "JOIN corpus_document d ON d.id = c.document_id GROUP BY 1")
        collections = {r[0]: (r[1], r[2]) for r in cursor.fetchall()}
        cursor.execute("SELECT d.collection_id, u.lexeme, count(*) FROM corpus_chunk c "
                       "JOIN corpus_document d ON d.id = c.document_id, unnest(c.search) u GROUP BY 1, 2")
        terms = {(r[0], r[1]): r[2] for r in cursor.fetchall()}
    return collections, terms


def _expected_postings() -> set[tuple]:
    """The chunks in the HNSW graph have postings; the tail's come with the merge (corpus 0017)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT c.id, d.collection_id, u.lexeme, array_length(u.positions, 1), length(c.search) "
                       "FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id, unnest(c.search) u "
                       "WHERE c.in_graph")
        return set(cursor.fetchall())


def _stored_postings() -> set[tuple]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT chunk_id, collection_id, lexeme, tf, len FROM bm25_posting")
        return set(cursor.fetchall())


def _stored_stats() -> tuple[dict, dict]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT collection_id, chunk_count, total_length FROM bm25_collection_stats "
                       "WHERE chunk_count <> 0")
        collections = {r[0]: (r[1], r[2]) for r in cursor.fetchall()}
        cursor.execute("SELECT collection_id, lexeme, df FROM bm25_term_stats")
        terms = {(r[0], r[1]): r[2] for r in cursor.fetchall()}
    return collections, terms


def document_frequencies(collection_id: int) -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT lexeme, df FROM bm25_term_stats WHERE collection_id = %s", [collection_id])
        return dict(cursor.fetchall())


def chunk_count(collection_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(sum(chunk_count), 0) FROM bm25_collection_stats WHERE collection_id = %s",
                       [collection_id])
        return int(cursor.fetchone()[0])


def _keyword_scores(collections, query, mode="keyword"):
    result = fetch_candidates(query=query, vector=ANY_VECTOR, collection_ids=[c.id for c in collections],
                              mode=mode, candidates=100)
    return {c.chunk_id: c.bm25 for c in result.candidates}, result


def test_bm25_scores_match_reference(monkeypatch):
    monkeypatch.setattr(tuning, "BM25_K1", 1.2)
    monkeypatch.setattr(tuning, "BM25_B", 0.75)
    col = make_collection("animals")
    make_document(col, "a.txt", CORPUS[:3])
    make_document(col, "b.txt", CORPUS[3:])
    for query in ["quick fox", "Which index makes database queries fast?", "dog"]:
        scores, _ = _keyword_scores([col], query)
        reference = _reference_bm25([col], query, 1.2, 0.75)
        assert scores.keys() == reference.keys()
        for cid, value in reference.items():
            assert scores[cid] == pytest.approx(value, rel=1e-9)


def test_bm25_uses_k1_and_b(monkeypatch):
    monkeypatch.setattr(tuning, "BM25_K1", 2.0)
    monkeypatch.setattr(tuning, "BM25_B", 0.3)
    col = make_collection("animals")
    make_document(col, "a.txt", CORPUS)
    scores, _ = _keyword_scores([col], "foxes hunt quick dogs")
    reference = _reference_bm25([col], "foxes hunt quick dogs", 2.0, 0.3)
    assert scores == pytest.approx(reference, rel=1e-9)


def test_keyword_candidates_use_or_semantics():
    col = make_collection("animals")
    make_document(col, "a.txt", CORPUS)
    # No chunk has both "zebra" and "database"; OR semantics still finds the database chunk.
    scores, _ = _keyword_scores([col], "zebra database")
    texts = set(Chunk.objects.filter(id__in=scores).values_list("text", flat=True))
    assert texts == {CORPUS[3]}


def test_statistics_span_the_collections_searched():
    one, two = make_collection("one"), make_collection("two")
    make_document(one, "a.txt", CORPUS[:3])
    make_document(two, "b.txt", CORPUS[3:])
    scores, _ = _keyword_scores([one, two], "quick fox table")
    reference = _reference_bm25([one, two], "quick fox table", 1.2, 0.75)
    assert scores == pytest.approx(reference, rel=1e-9)
    only_one, _ = _keyword_scores([one], "quick fox table")
    assert set(only_one) < set(scores)  # scoped: nothing from collection two


@pytest.mark.parametrize("query", ["it's C:\\temp 'quoted' a|b & !c :* <->", "\\", "''", "the a of"])
def test_query_syntax_characters_are_plain_words(query):
    col = make_collection("animals")
    make_document(col, "a.txt", CORPUS + ["Temp files on C: are quoted."])
    scores, _ = _keyword_scores([col], query)
    expected = set(_reference_bm25([col], query, 1.2, 0.75))
    assert set(scores) == expected


def _assert_exact_before_and_after_the_merge() -> None:
    assert _stored_stats() == _expected_stats()
    assert _stored_postings() == _expected_postings()
    graph_merge()
    assert _stored_stats() == _expected_stats()
    assert _stored_postings() == _expected_postings()
    assert Chunk.objects.filter(in_graph=False).count() == 0


def test_statistics_and_postings_stay_exact_through_insert_replace_update_and_delete():
    one, two = make_collection("one"), make_collection("two")
    doc = make_document(one, "a.txt", CORPUS[:3])
    make_document(two, "b.txt", CORPUS[3:])
    _assert_exact_before_and_after_the_merge()

    # Replace a document's chunks the way the pipeline does: delete + bulk insert, one transaction.
    with transaction.atomic():
        Chunk.objects.filter(document=doc).delete()
        Chunk.objects.bulk_create([
            Chunk(document=doc, chunk_index=0, text="Zebras graze.", start=0, end=13),
            Chunk(document=doc, chunk_index=1, text=" A fox watches zebras.", start=13, end=35)])
    _assert_exact_before_and_after_the_merge()
    assert document_frequencies(one.id)["zebra"] == 2
    assert "dog" not in document_frequencies(one.id)  # a lexeme gone from every chunk leaves no row

    Chunk.objects.filter(document=doc, chunk_index=0).update(text="Lions roar.", context="Savanna")
    _assert_exact_before_and_after_the_merge()
    assert document_frequencies(one.id)["zebra"] == 1

    doc.delete()
    _assert_exact_before_and_after_the_merge()
    assert chunk_count(one.id) == 0
    assert chunk_count(two.id) == 2

    two.delete()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM bm25_term_stats WHERE collection_id = %s", [two.id])
        assert cursor.fetchone()[0] == 0
        cursor.execute("SELECT count(*) FROM bm25_posting WHERE collection_id = %s", [two.id])
        assert cursor.fetchone()[0] == 0


def test_rebuild_keyword_index_recomputes_everything():
    col = make_collection("animals")
    make_document(col, "a.txt", CORPUS)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE bm25_term_stats SET df = 99")
        cursor.execute("DELETE FROM bm25_posting WHERE lexeme = 'fox'")
        cursor.execute("UPDATE bm25_posting SET tf = 7")
    out = StringIO()
    call_command("rebuild_keyword_index", stdout=out)
    assert out.getvalue() == "Keyword index rebuilt.\n"
    assert _stored_stats() == _expected_stats()
    assert _stored_postings() == _expected_postings()


def test_postings_cut_per_term_still_score_exactly(monkeypatch):
    monkeypatch.setattr(tuning, "BM25_TERM_POSTINGS", 1)  # the first pass reads one posting per query lexeme
    col = make_collection("animals")
    make_document(col, "a.txt", CORPUS, embeddings=random_unit_vectors(len(CORPUS)))
    graph_merge()  # the first pass reads postings: the tail's chunks are all scored exactly
    query = "fox barks"  # "bark" is in one chunk; "fox" in three, most often in the second
    reference = _reference_bm25([col], query, 1.2, 0.75)
    scores, _ = _keyword_scores([col], query)
    assert set(scores) == set(Chunk.objects.filter(text__in=CORPUS[1:3]).values_list("id", flat=True))
    assert len(reference) == 3
    assert scores == pytest.approx({cid: reference[cid] for cid in scores}, rel=1e-9)  # every lexeme counts

    # Hybrid: the vector side's chunks get their exact BM25 too, found by the first pass or not.
    _, hybrid = _keyword_scores([col], query, mode="hybrid")
    assert len(hybrid.candidates) == len(CORPUS)
    assert {c.chunk_id: c.bm25 for c in hybrid.candidates} == pytest.approx(
        {c.chunk_id: reference.get(c.chunk_id, 0.0) for c in hybrid.candidates}, rel=1e-9)

    monkeypatch.setattr(tuning, "BM25_TERM_POSTINGS", 1000)
    assert _keyword_scores([col], query)[0] == pytest.approx(reference, rel=1e-9)


def test_each_collection_searched_reads_its_own_best_postings(monkeypatch):
    # A large collection whose "apple" chunks all outrank the small one's (short chunks have the
    # higher BM25 term factor) must not crowd the small one out of the first pass: each reads its
    # own best 4, as it would searched alone.
    monkeypatch.setattr(tuning, "BM25_TERM_POSTINGS", 4)
    large, small = make_collection("large"), make_collection("small")
    make_document(large, "a.txt", [f"apple {i}. " for i in range(30)])
    make_document(small, "b.txt", ["apple orchards bloom white in spring. ", "green apple tree leaves fall. ",
                                   "cider pressed from an apple harvest. ", "an apple a day keeps doctors away. "])
    graph_merge()  # the budget is the postings' (the tail's chunks are all scored)
    scores, _ = _keyword_scores([large, small], "apple")
    found = Chunk.objects.filter(id__in=scores)
    assert sorted(found.values_list("document__collection__slug", flat=True)) == ["large"] * 4 + ["small"] * 4
    assert _keyword_scores([small], "apple")[0].keys() <= scores.keys()  # what it finds searched alone


def test_beyond_four_collections_the_posting_budget_is_shared_evenly(monkeypatch):
    # Six collections hold "apple": four budgets of 3 postings, shared, is 2 per collection.
    monkeypatch.setattr(tuning, "BM25_TERM_POSTINGS", 3)
    collections = [make_collection(f"c{n}") for n in range(6)]
    for n, col in enumerate(collections):
        make_document(col, f"{n}.txt", ["apple pie. ", "apple tart recipe. ", "an apple a day keeps doctors away. "])
    graph_merge()
    scores, _ = _keyword_scores(collections, "apple")
    per_collection = Chunk.objects.filter(id__in=scores).values_list("document__collection__slug", flat=True)
    assert sorted(per_collection) == sorted([col.slug for col in collections] * 2)
    # The two read in each are its best: the two shortest.
    assert set(Chunk.objects.filter(id__in=scores).values_list("text", flat=True)) == {"apple pie. ",
                                                                                     "apple tart recipe. "}
    monkeypatch.setattr(tuning, "BM25_TERM_POSTINGS", 100)
    assert len(_keyword_scores(collections, "apple")[0]) == 18


IDENTIFIER_DOCS = [
    "Django settings: every Django project has a settings module, and the Django settings module "
    "is where Django reads its settings. ",
    "Set DJANGO_SETTINGS_MODULE before running a script. ",
    "Use get_object_or_404() in views; it raises Http404. ",
]


def test_underscore_identifiers_are_also_one_lexeme():
    col = make_collection("ids")
    make_document(col, "ids.txt", IDENTIFIER_DOCS)
    chunk = Chunk.objects.get(document__collection=col, chunk_index=1)
    lexemes = _lexemes(chunk.id)
    assert "djangosettingsmodule" in lexemes
    assert {"django", "set", "modul"} <= set(lexemes)  # the parser's words stay
    assert "getobjector404" in _lexemes(Chunk.objects.get(document__collection=col, chunk_index=2).id)


def test_a_query_naming_an_identifier_finds_the_chunk_that_holds_it():
    col = make_collection("ids")
    make_document(col, "ids.txt", IDENTIFIER_DOCS)
    query = "What is DJANGO_SETTINGS_MODULE?"
    scores, _ = _keyword_scores([col], query)
    by_text = {Chunk.objects.get(pk=cid).text: score for cid, score in scores.items()}
    # Without the identifier as one lexeme, the chunk repeating "Django", "settings" and "module"
    # would score higher than the one naming the variable.
    assert by_text[IDENTIFIER_DOCS[1]] > by_text[IDENTIFIER_DOCS[0]]
    assert scores == pytest.approx(_reference_bm25([col], query, 1.2, 0.75), rel=1e-9)
