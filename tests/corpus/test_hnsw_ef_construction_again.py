"""corpus 0015_hnsw_ef_construction_64_again: a database migrated while the deleted migration that
lowered the chunk HNSW index's ef_construction to 32 existed gets 64 back, in place."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = ("corpus", "0014_reembed")


def _options() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'chunk_embedding_hnsw' AND relkind = 'i'")
        return set(cursor.fetchone()[0] or [])


def _relfilenode() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT relfilenode FROM pg_class WHERE relname = 'chunk_embedding_hnsw'")
        return cursor.fetchone()[0]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets or executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_a_database_left_at_ef_construction_32_gets_64_back_without_a_rebuild():
    try:
        _migrate([BEFORE])
        with connection.cursor() as cursor:  # what the deleted corpus 0015_hnsw_ef_construction_32 did
            cursor.execute("ALTER INDEX chunk_embedding_hnsw SET (ef_construction = 32)")
        assert _options() == {"m=16", "ef_construction=32"}
        built = _relfilenode()
    finally:
        _migrate(None)  # every app at its latest, for the tests after this one
    assert _options() == {"m=16", "ef_construction=64"}
    assert _relfilenode() == built  # an option changed, nothing rebuilt
