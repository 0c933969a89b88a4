"""Integers from text that people and clients send (form fields, query strings, settings).

`str.isdigit()` is True for "²" and "①", which `int()` refuses, and `int()` itself takes "١٢",
"1_000" and " 7 "; an id that overflows a Postgres bigint fails in the database. parse_int is the
one check used instead: plain ASCII digits within bounds, or None."""

from __future__ import annotations

BIGINT_MAX = 2**63 - 1  # the largest primary key Postgres can hold


def parse_int(text: str | None, *, minimum: int = 0, maximum: int = BIGINT_MAX) -> int | None:
    """`text` as an int if it is ASCII digits only (no sign, space or underscore) and the value is
    within minimum..maximum; None otherwise."""
    if not text or not text.isascii() or not text.isdigit() or len(text) > len(str(maximum)):
        return None
    value = int(text)
    return value if minimum <= value <= maximum else None
