"""Which database a read uses: the one place that decides between the primary and the replicas.

`reads_from_replica(reads=...)` marks a read-only operation (a search, an answer's sources) that may
run on a replica. Inside it, ORM reads go to the chosen replica (ReplicaRouter.db_for_read) and raw
SQL asks `read_connection()`; outside it everything uses the primary. The primary is used instead
when:
- there is no usable replica (none configured, down, or lagging: replicas.health),
- the caller is inside a transaction on the primary (it must see its own uncommitted rows),
- this request already wrote to one of the apps the operation `reads` (it must see that write;
  writes through the ORM are noted by ReplicaRouter.db_for_write, cleared at each request's start),
- the process is a Celery worker (`use_primary_only()`, called when a worker starts).
The replicas take turns (round-robin). A read that fails on a replica (the server died, a query
cancelled by recovery) is marked and run again once on the primary.
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections

from replicas import health

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

_read_alias: ContextVar[str | None] = ContextVar("replicas_read_alias", default=None)
_written: ContextVar[frozenset[str]] = ContextVar("replicas_written", default=frozenset())
_turn = itertools.count()
_primary_only = False


def replica_aliases() -> list[str]:
    """The configured replicas' database aliases (settings.REPLICA_DATABASES), in order."""
    return list(settings.REPLICA_DATABASES)


def use_primary_only() -> None:
    """From now on this process never reads from a replica (Celery workers: the pipeline reads what
    it has just written)."""
    global _primary_only
    _primary_only = True


def forget_writes(**_signal_kwargs) -> None:
    """Start a request with nothing written (connected to request_started)."""
    _written.set(frozenset())


def note_write(app_label: str) -> None:
    _written.set(_written.get() | {app_label})


def read_alias() -> str:
    """The alias reads use now: the replica chosen by the enclosing reads_from_replica, else "default"."""
    return _read_alias.get() or DEFAULT_DB_ALIAS


def read_connection():
    """The connection raw read-only SQL must use (the request's own connection to that database)."""
    return connections[read_alias()]


def _choose(reads: frozenset[str]) -> str:
    aliases = replica_aliases()
    if (not aliases or _primary_only or connections[DEFAULT_DB_ALIAS].in_atomic_block
            or reads & _written.get()):
        return DEFAULT_DB_ALIAS
    first = next(_turn)
    for i in range(len(aliases)):
        alias = aliases[(first + i) % len(aliases)]
        if health.state(alias).usable:
            return alias
    return DEFAULT_DB_ALIAS


def reads_from_replica(*, reads: Iterable[str]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a read-only function (it returns a value, not a generator) that may run on a replica;
    `reads`: the app labels whose tables it reads (a write to one of them earlier in the request keeps
    it on the primary). Nested calls keep the outer call's database."""
    labels = frozenset(reads)

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            if _read_alias.get() is not None:
                return function(*args, **kwargs)
            alias = _choose(labels)
            token = _read_alias.set(alias)
            try:
                return function(*args, **kwargs)
            except (OperationalError, InterfaceError) as exc:
                if alias == DEFAULT_DB_ALIAS:
                    raise
                health.mark_unusable(alias, exc)
                logger.warning("a read on replica %s failed (%s): run again on the primary", alias, exc)
                _read_alias.set(DEFAULT_DB_ALIAS)
                return function(*args, **kwargs)
            finally:
                _read_alias.reset(token)

        return wrapper

    return decorate


class ReplicaRouter:
    """Django database router (settings.DATABASE_ROUTERS): reads follow `read_alias()`, writes and
    migrations always go to the primary."""

    def db_for_read(self, model, **hints) -> str | None:
        return _read_alias.get()  # None: Django's default (the primary, or the instance's database)

    def db_for_write(self, model, **hints) -> str:
        note_write(model._meta.app_label)
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints) -> bool:
        return True  # a replica holds the same rows as the primary

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints) -> bool | None:
        return False if db in replica_aliases() else None
