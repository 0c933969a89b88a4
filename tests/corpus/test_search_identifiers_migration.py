"""corpus 0009 changes the keyword index's tsvector in place, which fires no row trigger: the
migration must rebuild the BM25 postings and statistics itself, both ways."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from corpus.models import Chunk
from tests.chat.factories import make_collection, make_document
from tests.chat.retrieval.test_bm25 import (
    IDENTIFIER_DOCS,
    _expected_postings,
    _expected_stats,
    _lexemes,
    _stored_postings,
    _stored_stats,
)

BEFORE = ("corpus", "0008_bm25_posting_covering_key")


def _migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])


def _migrate_to_latest():
    """Every app back at its latest migration: going back to corpus 0008 also unapplied the
    migrations of other apps that depend on corpus 0009 (chat's), which later tests need."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def _assert_index_consistent(*, before_the_graph: bool = False):
    """Before corpus 0015 (no `in_graph`) every chunk has postings; since 0017 those in the graph."""
    if before_the_graph:
        with connection.cursor() as cursor:
            cursor.execute("SELECT c.id, d.collection_id, u.lexeme, array_length(u.positions, 1), length(c.search) "
                           "FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id, unnest(c.search) u")
            expected = set(cursor.fetchall())
    else:
        expected = _expected_postings()
    assert expected and _stored_postings() == expected
    assert _stored_stats() == _expected_stats()


def _gin_index() -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'chunk_search_gin'")
        row = cursor.fetchone()
    return row[0] if row else None


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("server", ["PostgreSQL 17+: SET EXPRESSION", "PostgreSQL 16: the column added again"])
def test_the_migration_rebuilds_postings_and_statistics_both_ways(server, monkeypatch):
    if "16" in server:
        monkeypatch.setattr(connection, "pg_version", 160004)
    col = make_collection("ids")
    make_document(col, "ids.txt", IDENTIFIER_DOCS)
    chunk_id = Chunk.objects.get(document__collection=col, chunk_index=1).id
    assert "djangosettingsmodule" in _lexemes(chunk_id)
    try:
        _migrate(BEFORE)
        assert "djangosettingsmodule" not in _lexemes(chunk_id)
        _assert_index_consistent(before_the_graph=True)
    finally:
        _migrate_to_latest()
    assert "djangosettingsmodule" in _lexemes(chunk_id)
    _assert_index_consistent()
    assert _gin_index() is None  # corpus 0015 drops it again: no query uses it
    with connection.cursor() as cursor:
        cursor.execute("SELECT df FROM bm25_term_stats WHERE collection_id = %s AND lexeme = 'djangosettingsmodule'",
                       [col.id])
        assert cursor.fetchone() == (1,)
