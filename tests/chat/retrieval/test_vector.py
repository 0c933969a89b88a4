import pytest
from django.db import connection, transaction

from chat.retrieval import tuning
from chat.retrieval.vector import execute_with_session_settings

SETTINGS = ("SELECT current_setting('hnsw.ef_search', true), current_setting('hnsw.iterative_scan', true), "
            "current_setting('max_parallel_workers_per_gather'), %s::int")


def _session_values():
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('hnsw.ef_search', true), "
                       "current_setting('max_parallel_workers_per_gather')")
        return cursor.fetchone()


@pytest.mark.django_db(transaction=True)  # autocommit, as a search outside a request transaction runs
def test_settings_hold_for_the_statement_and_end_with_it(settings):
    settings.SEARCH_HNSW_EF = 77
    before = _session_values()
    with connection.cursor() as cursor:
        execute_with_session_settings(cursor, SETTINGS, [5])
        assert cursor.fetchall() == [("77", "relaxed_order", "0", 5)]
    ef_search, parallel_workers = _session_values()
    assert ef_search != "77"  # back to the default (or unset, if the extension never loaded here)
    assert parallel_workers == before[1] != "0"


@pytest.mark.django_db(transaction=True)
def test_a_failing_statement_leaves_the_connection_usable():
    with pytest.raises(Exception, match="division by zero"), connection.cursor() as cursor:
        execute_with_session_settings(cursor, "SELECT 1 / %s", [0])
    with connection.cursor() as cursor:
        execute_with_session_settings(cursor, SETTINGS, [6])
        assert cursor.fetchone()[3] == 6


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_the_settings_last_until_it_ends(settings):
    settings.SEARCH_HNSW_EF = 55
    with transaction.atomic():
        with connection.cursor() as cursor:
            execute_with_session_settings(cursor, SETTINGS, [1])
            assert cursor.fetchone()[0] == "55"
        assert _session_values()[0] == "55"
    assert _session_values()[0] != "55"


@pytest.mark.django_db
def test_the_hnsw_index_serves_the_order_by_the_query_vector_written_once(settings, monkeypatch):
    # The statement holds the vector once (query_vector CTE) and orders by a subquery of it: the
    # index must still be able to produce that order.
    from chat.retrieval.candidates import _MODE_SIDES, _parameters, _statement
    from tests.chat.factories import make_collection, make_document, random_unit_vectors

    monkeypatch.setattr(tuning, "EXACT_MAX_CHUNKS", 0)
    collection = make_collection("vectors")
    make_document(collection, "v.txt", [f"chunk {i} " for i in range(50)], embeddings=random_unit_vectors(50))
    sql = _statement(_MODE_SIDES["hybrid"])
    assert sql.count("%(vector)s") == 1
    with connection.cursor() as cursor:
        # On a table this small the planner would rather sort; with sorting off only the index orders.
        cursor.execute("SET LOCAL enable_sort = off; SET LOCAL enable_seqscan = off")
        execute_with_session_settings(cursor, "EXPLAIN (COSTS OFF) " + sql, _parameters(
            "chunk", random_unit_vectors(1, seed=3)[0], [collection.id], 10))
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Index Scan using chunk_embedding_hnsw" in plan
    assert "Order By: (embedding <=> (InitPlan" in plan
