"""Fixtures of the re-embed tests."""

from __future__ import annotations

import pytest
from django.db import connection

from corpus.vectors import column_model


@pytest.fixture
def column_holds():
    """column_holds(model): the chunk table's column holds `model`'s vectors, as migration corpus 0026
    would have recorded it, for this test (the comment is rolled back with the test's transaction)."""

    def record(model: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute("COMMENT ON COLUMN corpus_chunk.embedding IS '" + model.replace("'", "''") + "'")
        column_model.cache_clear()

    yield record
    column_model.cache_clear()
