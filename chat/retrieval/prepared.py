"""Search statements planned once per connection: PREPARE on first use, EXECUTE after.

A search statement is a dozen CTEs; planning it took 1.1-1.5 ms of a 5-9 ms statement, and with
client-side binding the 384-number query vector was parsed at each of its four places in the
text. Django's psycopg cursors bind parameters client-side, so psycopg's own statement cache does
not apply; the statements are prepared in SQL instead. The values that change from one search to
the next (the query, its vector, the collections) become the statement's parameters; the others
(limits, BM25 constants) are written into its text, so the plan knows them and a changed setting
is a different statement. Prepared statements live as long as the database session and survive a
rollback, so which ones a connection holds is remembered per psycopg connection.

They run with a generic plan (`plan_cache_mode = force_generic_plan`, for the statement only):
the values a custom plan would see add nothing the one-time filters in the statements do not
decide at run time, and left to itself Postgres plans five custom plans first. On the 100k-chunk
benchmark, each half alone and warm, alternating: vector half 0.68x, keyword half 0.81x; inside
the search, candidates about 0.9x (docs/evaluation.md).

A prepared search statement holds about 0.3 MB of the server session's memory (its query trees
and generic plan): a connection that runs every mode holds four or five. Behind a pooler that
hands out server sessions per transaction (pgbouncer's transaction mode), prepared statements do
not persist: set SEARCH_PREPARED_STATEMENTS=0 there.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings

PREFIX = "ragweb_"

_lock = threading.Lock()
# psycopg connection -> names of the statements prepared on it; None when unknown (a PREPARE was
# sent in a string that failed: whether it took effect is read back from the server).
_prepared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class PreparedStatement:
    name: str
    definition: str  # the PREPARE statement
    arguments: tuple[str, ...]  # the per-search parameters, in order


def execute(cursor, sql: str, params: Mapping[str, object], parameter_types: Mapping[str, str], *,
            preamble: str = "") -> None:
    """Run `sql` (psycopg named placeholders) as a prepared statement, in one round trip.

    `parameter_types` names the per-search parameters and their SQL types; every other parameter
    is written into the statement's text as the literal psycopg would send. `preamble` (SET LOCAL
    statements, say) runs first in the same query string. The rows are left to fetch. With
    SEARCH_PREPARED_STATEMENTS off, `preamble` and `sql` are sent as they are."""
    if not settings.SEARCH_PREPARED_STATEMENTS:
        send(cursor, [preamble, sql], params)
        return
    in_sql = {name for name in params if f"%({name})s" in sql}
    used = {name: sql_type for name, sql_type in parameter_types.items() if name in in_sql}
    constants = tuple(sorted((name, _literal(cursor, params[name])) for name in in_sql - used.keys()))
    statement = prepare(sql, constants, tuple(used.items()))
    connection = cursor.connection
    known = _known(cursor, connection)
    parts = [] if statement.name in known else [statement.definition]
    parts += [preamble, "SET LOCAL plan_cache_mode = force_generic_plan",
              f"EXECUTE {statement.name}({', '.join(f'%({name})s' for name in statement.arguments)})"]
    try:
        send(cursor, parts, {name: params[name] for name in statement.arguments})
    except Exception:
        if statement.name not in known:
            with _lock:
                _prepared[connection] = None
        raise
    known.add(statement.name)


def send(cursor, statements: list[str], params) -> None:
    """Send `statements` as one query string (one round trip), leaving the last one's rows to fetch."""
    cursor.execute(";\n".join(statement for statement in statements if statement), params)
    while cursor.description is None and cursor.nextset():
        pass  # skip the empty results of the PREPARE and the SETs


@lru_cache(maxsize=256)
def prepare(sql: str, constants: tuple[tuple[str, str], ...],
            parameters: tuple[tuple[str, str], ...]) -> PreparedStatement:
    """The statement for `sql` with `constants` (name, SQL literal) written in and `parameters`
    (name, SQL type) numbered $1, $2, ... in the given order. Its name is a digest of its text."""
    text = sql
    for name, literal in constants:
        text = text.replace(f"%({name})s", literal)
    for number, (name, _) in enumerate(parameters, start=1):
        text = text.replace(f"%({name})s", f"${number}")
    if "%(" in text.replace("%%", ""):
        raise ValueError("the statement has a placeholder without a value")
    name = PREFIX + hashlib.sha256(text.encode()).hexdigest()[:24]
    types = ", ".join(sql_type for _, sql_type in parameters)
    return PreparedStatement(name=name, definition=f"PREPARE {name}({types}) AS {text}",
                             arguments=tuple(name for name, _ in parameters))


def _literal(cursor, value: object) -> str:
    # The literal psycopg itself would have put in the query, escaped for the formatting of the
    # final query string (which sees it again).
    return cursor.mogrify("%s", [value]).replace("%", "%%")


def _known(cursor, connection) -> set[str]:
    with _lock:
        known = _prepared.get(connection, set())
    if known is None:
        cursor.execute("SELECT name FROM pg_prepared_statements WHERE starts_with(name, %s)", [PREFIX])
        known = {name for (name,) in cursor.fetchall()}
    with _lock:
        _prepared[connection] = known
    return known

