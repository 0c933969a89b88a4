"""Is a replica usable: reachable, and no more than MAX_LAG_SECONDS behind the primary.

Checked on the replica itself with one cheap statement, and the answer kept for
CHECK_SECONDS per process, so a search pays for the check at most once every few seconds.
A replica not streaming from the primary (its WAL receiver stopped: the primary unreachable, a
password changed) is not usable, however fresh it looks. Otherwise the lag is 0 when it has replayed
all the WAL it received (an idle primary sends none, so an old last-replayed transaction does not
mean a stale replica), else the age of the last transaction replayed — an overestimate right after
a primary was idle, which at worst sends searches to the primary for a moment. A change of state
(usable ↔ not) is logged once, not per search.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connections

# A replica further behind than this is skipped (searches go to the primary): a document ready on the
# primary shows in searches within seconds, while normal streaming lag (replayed 0.05 s after a commit
# under load, docs/scaling.md "Replicas") never trips it. A constant: it was a setting (REPLICA_MAX_LAG_SECONDS).
MAX_LAG_SECONDS = 10.0
# How long a process trusts its last look at a replica. The look costs 0.5-1.2 ms (docs/scaling.md,
# "Replicas": `make bench-replica`), so every 5 s it is nothing beside the searches; a replica that falls
# behind is noticed within 5 s. A constant: it was a setting (REPLICA_CHECK_SECONDS).
CHECK_SECONDS = 5.0

logger = logging.getLogger(__name__)

# Streaming, and the lag: NULL (nothing replayed yet while WAL is waiting) reads as "unknown".
_LAG_SQL = """
SELECT NOT pg_is_in_recovery() OR EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming'),
       CASE
           WHEN NOT pg_is_in_recovery() THEN 0
           WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
           ELSE extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())
       END"""


@dataclass(frozen=True)
class ReplicaState:
    alias: str
    usable: bool
    lag_seconds: float | None  # None: unreachable or unknown
    error: str  # why it is not usable ("" when it is)
    checked_at: float  # time.monotonic()


_states: dict[str, ReplicaState] = {}
_lock = threading.Lock()


def _measure(alias: str) -> ReplicaState:
    now = time.monotonic()
    connection = connections[alias]
    try:
        with connection.cursor() as cursor:
            cursor.execute(_LAG_SQL)
            streaming, lag = cursor.fetchone()
    except DatabaseError as exc:
        connection.close()  # a broken connection must not be reused by the next search
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return ReplicaState(alias, False, None, f"unreachable: {message}", now)
    limit = MAX_LAG_SECONDS
    if not streaming:
        return ReplicaState(alias, False, None, "not streaming from the primary", now)
    if lag is None:
        return ReplicaState(alias, False, None, "lag unknown (nothing replayed yet)", now)
    lag = float(lag)
    if lag > limit:
        return ReplicaState(alias, False, lag, f"lagging {lag:.1f} s (more than {limit:g} s)", now)
    return ReplicaState(alias, True, lag, "", now)


def _record(state: ReplicaState) -> None:
    with _lock:
        before = _states.get(state.alias)
        _states[state.alias] = state
    if before is None or before.usable != state.usable:
        if state.usable:
            if before is not None:
                logger.warning("replica %s is usable again: searches read from it", state.alias)
        else:
            logger.warning("replica %s is not used, searches go to the primary: %s", state.alias, state.error)


def state(alias: str, *, fresh: bool = False) -> ReplicaState:
    """The replica's state, measured again when older than CHECK_SECONDS (or `fresh`)."""
    with _lock:
        known = _states.get(alias)
    if known is not None and not fresh and time.monotonic() - known.checked_at < CHECK_SECONDS:
        return known
    measured = _measure(alias)
    _record(measured)
    return measured


def mark_unusable(alias: str, error: BaseException) -> None:
    """A read failed on the replica: skip it until its next check."""
    connections[alias].close()
    message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    _record(ReplicaState(alias, False, None, f"a read failed: {message}", time.monotonic()))


def forget() -> None:
    """Drop every cached state (tests, and a change of settings)."""
    with _lock:
        _states.clear()


def report() -> list[dict]:
    """Each configured replica measured now, for /healthz (staff): alias, host, port, usable,
    lag_seconds, error. A replica that is down does not make the app unhealthy: searches use the primary."""
    rows = []
    for alias in settings.REPLICA_DATABASES:
        measured = state(alias, fresh=True)
        where = connections[alias].settings_dict
        rows.append({"alias": alias, "host": where.get("HOST", ""), "port": where.get("PORT", ""),
                     "usable": measured.usable,
                     "lag_seconds": None if measured.lag_seconds is None else round(measured.lag_seconds, 3),
                     "error": measured.error})
    return rows
