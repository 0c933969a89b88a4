"""corpus 0015 lowers the chunk HNSW index's ef_construction to 32 in place (an option, no rebuild),
and back to 64 when unapplied; a re-embed's partial index is made with the same options."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from corpus.models import HNSW_EF_CONSTRUCTION, HNSW_M
from corpus.reembed import store

BEFORE = ("corpus", "0014_reembed")


def _options(index: str) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s AND relkind = 'i'", [index])
        row = cursor.fetchone()
    assert row is not None, f"no index {index}"
    return set(row[0] or [])


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets or executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_the_migration_sets_ef_construction_32_and_back_without_rebuilding_the_index():
    assert (HNSW_M, HNSW_EF_CONSTRUCTION) == (16, 32)
    assert _options("chunk_embedding_hnsw") == {"m=16", "ef_construction=32"}
    with connection.cursor() as cursor:
        cursor.execute("SELECT relfilenode FROM pg_class WHERE relname = 'chunk_embedding_hnsw'")
        built = cursor.fetchone()[0]
    try:
        _migrate([BEFORE])
        assert _options("chunk_embedding_hnsw") == {"m=16", "ef_construction=64"}
    finally:
        _migrate(None)  # every app at its latest, for the tests after this one
    assert _options("chunk_embedding_hnsw") == {"m=16", "ef_construction=32"}
    with connection.cursor() as cursor:
        cursor.execute("SELECT relfilenode FROM pg_class WHERE relname = 'chunk_embedding_hnsw'")
        assert cursor.fetchone()[0] == built  # the same files: an option changed, nothing rebuilt


@pytest.mark.django_db(transaction=True)
def test_a_reembed_index_is_made_with_the_same_hnsw_options():
    name = store.index_name("some/other-model")
    try:
        store.ensure_index("some/other-model", 8)
        assert _options(name) == {"m=16", "ef_construction=32"}
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP INDEX IF EXISTS {name}")  # DDL: a transactional test's flush keeps it
