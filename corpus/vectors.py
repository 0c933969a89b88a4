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
