"""Fixtures of the re-embed tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection

from corpus.vectors import column_model


def column_comment() -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT col_description('corpus_chunk'::regclass, attnum) FROM pg_attribute "
                       "WHERE attrelid = 'corpus_chunk'::regclass AND attname = 'embedding'")
        return cursor.fetchone()[0]


def _set_comment(comment: str | None) -> None:
    with connection.cursor() as cursor:
        if comment is None:
            cursor.execute("COMMENT ON COLUMN corpus_chunk.embedding IS NULL")
        else:
            cursor.execute("COMMENT ON COLUMN corpus_chunk.embedding IS '" + comment.replace("'", "''") + "'")
    column_model.cache_clear()


@contextmanager
def column_recording() -> Iterator:
    """Yields record(model), which makes the column say it holds `model`'s vectors (as migration corpus
    0026 records it); on leaving, the column says what it said before. A transaction=True test commits the
    comment, and the next test of the same database would otherwise put the default model's vectors in the
    side table and search the column for nothing."""
    before, changed = column_comment(), []

    def record(model: str) -> None:
        changed.append(model)
        _set_comment(model)

    try:
        yield record
    finally:
        if changed:
            _set_comment(before)
        column_model.cache_clear()


@pytest.fixture
def column_holds():
    """column_holds(model): the chunk table's column holds `model`'s vectors for this test (column_recording)."""
    with column_recording() as record:
        yield record
