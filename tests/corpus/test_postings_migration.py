"""corpus 0017: the BM25 postings follow the HNSW graph. A database migrated with chunks outside the
graph that already have postings (from 0016's triggers) loses those, and the merge gives them back
once, without duplicates; and back to 0016, the tail's postings return."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from corpus.graph.merge import graph_merge, graph_merge_batch
from tests.chat.factories import make_collection, make_document, random_unit_vectors

BEFORE = ("corpus", "0016_bm25_postings_sorted")


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets or executor.loader.graph.leaf_nodes())


def _rows(sql: str) -> list:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return sorted(cursor.fetchall())


POSTINGS = "SELECT chunk_id, lexeme, tf, len FROM bm25_posting"
IN_GRAPH_LEXEMES = ("SELECT c.id, u.lexeme, coalesce(array_length(u.positions, 1), 1), length(c.search) "
                    "FROM corpus_chunk c, unnest(c.search) AS u WHERE c.in_graph")
ALL_LEXEMES = IN_GRAPH_LEXEMES.replace(" WHERE c.in_graph", "")


@pytest.mark.django_db(transaction=True)
def test_unmerged_chunks_lose_their_postings_and_the_merge_gives_them_back_once():
    try:
        _migrate([BEFORE])
        col = make_collection("migrated-postings")
        make_document(col, "a.txt", ["compost heap ", "bread dough ", "ripe tomatoes "],
                      embeddings=random_unit_vectors(3))
        graph_merge_batch(batch=1)  # one chunk in the graph, two in the tail: all three with postings
        assert _rows(POSTINGS) == _rows(ALL_LEXEMES)
        assert len(_rows(POSTINGS)) > len(_rows(IN_GRAPH_LEXEMES)) > 0
        _migrate([])
        assert _rows(POSTINGS) == _rows(IN_GRAPH_LEXEMES)
        # The statistics' guard is asked as a count (a hash join), not EXISTS (a nested loop).
        assert "ragweb 0017" in _rows("SELECT prosrc FROM pg_proc WHERE proname = 'bm25_chunks_updated'")[0][0]
        assert graph_merge().merged == 2  # would fail on the primary key had a posting been left twice
        assert _rows(POSTINGS) == _rows(ALL_LEXEMES)
        # And back: with chunks in the tail, 0016 gives them their postings again.
        make_document(col, "b.txt", ["sourdough starter "], embeddings=random_unit_vectors(1, seed=2))
        assert _rows(POSTINGS) == _rows(IN_GRAPH_LEXEMES) != _rows(ALL_LEXEMES)
        _migrate([BEFORE])
        assert _rows(POSTINGS) == _rows(ALL_LEXEMES)
        assert "ragweb 0015" in _rows("SELECT prosrc FROM pg_proc WHERE proname = 'bm25_chunks_updated'")[0][0]
    finally:
        _migrate([])
