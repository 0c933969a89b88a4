import pytest
from django.db import connection, transaction

from chat.retrieval import prepared
from chat.retrieval.candidates import fetch_candidates
from corpus.ingest.embed import embed_texts
from tests.chat.factories import make_collection, make_document

pytestmark = pytest.mark.django_db



@pytest.fixture(autouse=True)
def no_prepared_statements(fresh_search_plans):
    """A connection keeps its prepared statements from test to test: start and end with none."""


SUM = "SELECT %(a)s::int + %(b)s * 10, current_setting('plan_cache_mode')"


def _prepared_names():
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, statement FROM pg_prepared_statements WHERE starts_with(name, %s)",
                       [prepared.PREFIX])
        return dict(cursor.fetchall())


def _run(sql, params, types):
    with connection.cursor() as cursor:
        prepared.execute(cursor, sql, params, types)
        return cursor.fetchall()


def test_prepared_once_per_connection_with_the_constants_in_its_text(django_assert_num_queries):
    assert _run(SUM, {"a": 1, "b": 7}, {"a": "int"}) == [(71, "force_generic_plan")]
    names = _prepared_names()
    (name, text), = names.items()
    assert "$1::int + 7 * 10" in text  # b written in, a a parameter
    with django_assert_num_queries(1) as captured:
        assert _run(SUM, {"a": 2, "b": 7}, {"a": "int"}) == [(72, "force_generic_plan")]
    assert "PREPARE" not in captured.captured_queries[0]["sql"]
    assert f"EXECUTE {name}(2)" in captured.captured_queries[0]["sql"]
    assert _prepared_names() == names


def test_a_changed_constant_is_another_statement():
    _run(SUM, {"a": 1, "b": 7}, {"a": "int"})
    assert _run(SUM, {"a": 1, "b": 8}, {"a": "int"})[0][0] == 81
    assert len(_prepared_names()) == 2


def test_values_with_percent_signs_and_quotes_reach_the_statement_intact():
    sql = "SELECT %(q)s::text || %(suffix)s, %(q)s::text LIKE '%%' || 'x'"
    assert _run(sql, {"q": "50% 'off'", "suffix": " 100%"}, {"q": "text"}) == [("50% 'off' 100%", False)]


def test_after_a_failure_the_connection_knows_what_it_holds():
    # The PREPARE took effect though the EXECUTE in the same string failed: preparing it again
    # would fail with "already exists".
    with pytest.raises(Exception, match="division by zero"), transaction.atomic():
        _run("SELECT 1 / %(d)s::int", {"d": 0}, {"d": "int"})
    assert len(_prepared_names()) == 1
    assert _run("SELECT 1 / %(d)s::int", {"d": 1}, {"d": "int"}) == [(1,)]


def test_a_placeholder_without_a_value_is_refused():
    with pytest.raises(ValueError, match="placeholder without a value"):
        _run("SELECT %(a)s::int + %(missing)s", {"a": 1}, {"a": "int", "missing": "int"})


@pytest.mark.parametrize("exact_max", [0, 5000], ids=["hnsw", "exact"])
@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword", "ts_rank_cd"])
def test_candidates_are_the_same_prepared_or_not(settings, mode, exact_max):
    settings.SEARCH_EXACT_MAX_CHUNKS = exact_max
    col = make_collection("guides")
    parts = ["Bread needs flour, water, salt and yeast. ", "Knead the dough for ten minutes. ",
             "Bake the loaf at 230 degrees. ", "A flat tyre is fixed by patching the inner tube. "]
    make_document(col, "guide.md", parts, embeddings=embed_texts(parts))
    query = "how long do I knead bread dough?"
    vector = embed_texts([query])[0]

    def rows():
        found = fetch_candidates(query=query, vector=vector, collection_ids=[col.id], mode=mode, candidates=3)
        rows = sorted((c.chunk_id, c.vector_rank, c.keyword_rank, c.similarity, c.bm25, c.keyword_score)
                      for c in found.candidates)
        return found.vector_scan, found.idf_sum, rows

    settings.SEARCH_PREPARED_STATEMENTS = False
    plain = rows()
    assert _prepared_names() == {}
    settings.SEARCH_PREPARED_STATEMENTS = True
    first, again = rows(), rows()
    assert len(_prepared_names()) == 1
    assert first == again == plain
    expected_scan = None if mode in ("keyword", "ts_rank_cd") else "hnsw" if exact_max == 0 else "exact"
    assert plain[2] and plain[0] == expected_scan


def test_search_with_segments_is_the_same_prepared_or_not(settings):
    from chat.retrieval.search import search
    from corpus.models import Collection

    col = make_collection("guides")
    parts = ["# Bread\n\nBread needs flour, water, salt and yeast. ", "Knead the dough for ten minutes. ",
             "Let it rise for an hour. ", "Bake the loaf at 230 degrees. ", "# Bikes\n\nPatch the inner tube. "]
    make_document(col, "guide.md", parts, embeddings=embed_texts(parts))

    def result():
        found = search(query="how do I make bread dough?", collections=Collection.objects.filter(pk=col.pk), k=3)
        return [(c.chunk_id, c.text) for c in found.chunks], [(s.start, s.end, s.text) for s in found.segments]

    settings.SEARCH_PREPARED_STATEMENTS = False
    plain = result()
    assert _prepared_names() == {}
    settings.SEARCH_PREPARED_STATEMENTS = True
    assert result() == result() == plain
    assert len(_prepared_names()) == 2  # the candidates, and the segments with the returned chunks' text
    assert plain[1] and all(text for _, text in plain[0])


def test_values_the_statement_does_not_use_are_neither_parameters_nor_part_of_its_name():
    sql = "SELECT %(a)s::int * %(b)s"
    _run(sql, {"a": 2, "b": 3, "query": "first question"}, {"a": "int", "query": "text"})
    assert _run(sql, {"a": 2, "b": 3, "query": "second question"}, {"a": "int", "query": "text"}) == [(6,)]
    (text,) = _prepared_names().values()
    assert "PREPARE" in text and "(int) AS SELECT $1::int * 3" in text


def test_a_small_collection_beside_a_large_one_is_searched_through_its_own_documents(settings):
    # A generic plan does not know how few documents the searched collections hold: the exact
    # vector scan must still read their chunks by document, not every chunk in the table.
    from chat.retrieval.vector import vector_literal
    from tests.chat.factories import random_unit_vectors

    settings.SEARCH_EXACT_MAX_CHUNKS = 100
    large = make_collection("large")
    for n in range(20):
        make_document(large, f"{n}.txt", [f"filler text {n} {i}. " for i in range(50)],
                      embeddings=random_unit_vectors(50, seed=n))
    small = make_collection("small")
    parts = ["Knead the dough for ten minutes. ", "Bake the loaf at 230 degrees. "]
    make_document(small, "bread.md", parts, embeddings=embed_texts(parts))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE corpus_chunk; ANALYZE corpus_document")
    vector = embed_texts(["how long do I knead dough?"])[0]
    found = fetch_candidates(query="knead", vector=vector, collection_ids=[small.id], mode="vector", candidates=5)
    assert found.vector_scan == "exact" and len(found.candidates) == 2
    (name,) = _prepared_names()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) EXECUTE {name}(%s, %s)", [vector_literal(vector), [small.id]])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    exact_scan = plan[plan.index("CTE vec_exact"):plan.index("CTE vec\n")]
    assert "Seq Scan on corpus_chunk" not in exact_scan
    assert "corpus_chunk_document_id" in exact_scan or "chunk_unique_index" in exact_scan
