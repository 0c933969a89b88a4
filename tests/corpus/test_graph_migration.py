"""corpus 0015: chunks already there are in the HNSW graph, new ones are not, without rewriting the
table; the HNSW index becomes partial, the tail gets its index, the unused GIN index goes; and back."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from corpus.models import Chunk
from tests.chat.factories import make_collection, make_document, random_unit_vectors

BEFORE = ("corpus", "0014_reembed")


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets or executor.loader.graph.leaf_nodes())


def _one(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return row[0] if row else None


def _indexdef(name: str) -> str | None:
    return _one("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [name])


def _table_file() -> int:
    return _one("SELECT relfilenode FROM pg_class WHERE relname = 'corpus_chunk'")


@pytest.mark.django_db(transaction=True)
def test_existing_chunks_enter_the_graph_new_ones_do_not_and_the_table_is_not_rewritten():
    col = make_collection("migrated")
    document = make_document(col, "a.txt", ["one ", "two ", "three "], embeddings=random_unit_vectors(3))
    try:
        _migrate([BEFORE])
        assert _one("SELECT count(*) FROM information_schema.columns WHERE table_name = 'corpus_chunk' "
                    "AND column_name = 'in_graph'") == 0
        assert "WHERE" not in _indexdef("chunk_embedding_hnsw")
        assert "USING gin (search)" in _indexdef("chunk_search_gin")
        table_file = _table_file()
        _migrate([("corpus", "0015_chunk_graph_tail")])
        assert _table_file() == table_file  # no rewrite: a catalogue change
        assert _one("SELECT atthasmissing FROM pg_attribute WHERE attrelid = 'corpus_chunk'::regclass "
                    "AND attname = 'in_graph'") is True  # existing rows read the "missing" value, true
        assert set(Chunk.objects.values_list("in_graph", flat=True)) == {True}
        with connection.cursor() as cursor:
            # A row written without the column (COPY, raw SQL) starts outside the graph, like the ORM's.
            cursor.execute("INSERT INTO corpus_chunk (document_id, chunk_index, text, start, \"end\", heading_path, "
                           "context, token_count) VALUES (%s, 3, 'four ', 14, 19, '', '', 1) RETURNING in_graph",
                           [document.pk])
            assert cursor.fetchone()[0] is False
        assert _indexdef("chunk_embedding_hnsw").endswith("WHERE in_graph")
        assert _indexdef("chunk_graph_tail").endswith("(document_id) WHERE (NOT in_graph)")
        assert _indexdef("chunk_search_gin") is None
        for function in ("bm25_chunks_updated", "bm25_postings_updated"):
            assert "ragweb 0015" in _one("SELECT prosrc FROM pg_proc WHERE proname = %s", [function])
        # And back: the column, the tail index and the guard go, the full index and the GIN return.
        _migrate([BEFORE])
        assert "WHERE" not in _indexdef("chunk_embedding_hnsw")
        assert _indexdef("chunk_graph_tail") is None and _indexdef("chunk_search_gin")
        assert "ragweb 0015" not in _one("SELECT prosrc FROM pg_proc WHERE proname = 'bm25_postings_updated'")
    finally:
        _migrate([])
