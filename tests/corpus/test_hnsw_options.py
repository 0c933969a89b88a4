"""Every HNSW index on chunk vectors is built with the same options: the column's (corpus 0001's
model state) and a re-embed's partial index (corpus/reembed/store.py)."""

import pytest
from django.db import connection

from corpus.models import HNSW_EF_CONSTRUCTION, HNSW_M
from corpus.reembed import store


def _options(index: str) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s AND relkind = 'i'", [index])
        row = cursor.fetchone()
    assert row is not None, f"no index {index}"
    return set(row[0] or [])


@pytest.mark.django_db(transaction=True)
def test_the_column_index_and_a_reembed_index_share_the_hnsw_options():
    expected = {f"m={HNSW_M}", f"ef_construction={HNSW_EF_CONSTRUCTION}"}
    assert expected == {"m=16", "ef_construction=64"}
    assert _options("chunk_embedding_hnsw") == expected
    name = store.index_name("some/other-model")
    try:
        store.ensure_index("some/other-model", 8)
        assert _options(name) == expected
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP INDEX IF EXISTS {name}")  # DDL: a transactional test's flush keeps it
