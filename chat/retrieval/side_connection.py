"""Database work run beside the caller's, on a second connection, so it overlaps the caller's.

A hybrid search's keyword half needs no query vector: sent over a second connection, it runs on
its own backend while the search embeds the query (chat/retrieval/early.py), instead of after it.

The second connections belong to a few long-lived worker threads (Django gives each thread its
own connection), opened on first use and kept: opening one costs more than the statement. They
are registered here so `close_all()` can close them from another thread (at shutdown, and in
tests before the test database is dropped).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections

T = TypeVar("T")

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_idle: threading.BoundedSemaphore | None = None  # one permit per idle worker
_owner_pid: int | None = None  # the process the pool's threads run in
_wrappers: list = []  # the worker threads' DatabaseWrappers


def available() -> bool:
    """Whether work may go to a side connection at all: enabled, and the caller is not inside a
    transaction (a side connection cannot see the caller's uncommitted rows)."""
    return settings.SEARCH_SIDE_CONNECTIONS > 0 and not connections[DEFAULT_DB_ALIAS].in_atomic_block


def try_submit(fn: Callable[[], T]) -> Future[T] | None:
    """Run `fn` on an idle worker thread, whose `django.db.connection` is its own; None when every
    worker is busy (under load, queueing behind other searches would be slower than running the
    work on the caller's own connection)."""
    global _executor, _idle, _owner_pid, _wrappers
    with _lock:
        if _owner_pid != os.getpid():
            # A forked child (a Celery worker process, say) inherits the pool but not its threads,
            # and the parent's connections are the parent's to close: start afresh.
            _executor, _owner_pid, _wrappers = None, os.getpid(), []
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=settings.SEARCH_SIDE_CONNECTIONS,
                                           thread_name_prefix="ragweb-side-db")
            _idle = threading.BoundedSemaphore(settings.SEARCH_SIDE_CONNECTIONS)
        executor, idle = _executor, _idle
    if not idle.acquire(blocking=False):
        return None
    try:
        future = executor.submit(_in_worker, fn)
    except BaseException:
        idle.release()
        raise
    future.add_done_callback(lambda _: idle.release())
    return future


def _in_worker(fn: Callable[[], T]) -> T:
    wrapper = connections[DEFAULT_DB_ALIAS]
    with _lock:
        if wrapper not in _wrappers:
            wrapper.inc_thread_sharing()  # lets close_all() close it from another thread
            _wrappers.append(wrapper)
    if wrapper.connection is not None and wrapper.errors_occurred and not wrapper.is_usable():
        wrapper.close()  # e.g. the server restarted since the last use; reconnect
    try:
        return fn()
    except (OperationalError, InterfaceError):
        wrapper.close()
        raise


def close_all() -> None:
    """Close the worker threads' connections (they reopen on next use)."""
    with _lock:
        for wrapper in _wrappers:
            wrapper.close()
