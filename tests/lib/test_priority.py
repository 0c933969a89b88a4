"""lib.priority: background work at a lower CPU priority, its local Postgres backend included."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from django.db import connection

from lib import priority


def _new_connection():
    """A psycopg connection of its own to the test database (closed by the caller)."""
    return connection.get_new_connection(connection.get_connection_params())


def _backend(raw) -> int:
    with raw.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _autogroup_nice(pid: int) -> int | None:
    path = Path(f"/proc/{pid}/autogroup")
    return int(path.read_text().split()[-1]) if path.exists() else None


@pytest.mark.django_db
def test_the_local_backend_serving_the_connection_is_lowered_and_no_other():
    mine, other = _new_connection(), _new_connection()
    try:
        pid, other_pid = _backend(mine), _backend(other)
        base, group = os.getpriority(os.PRIO_PROCESS, pid), _autogroup_nice(other_pid)
        lower = min(base + 5, 19)  # the server's own nice value may not be 0

        assert priority.lower_backend(mine, lower) is True

        assert os.getpriority(os.PRIO_PROCESS, pid) == lower
        assert _autogroup_nice(pid) in (lower, None)  # a session of its own: its autogroup is only it
        assert os.getpriority(os.PRIO_PROCESS, other_pid) == base
        assert _autogroup_nice(other_pid) == group
        with mine.cursor() as cursor:  # still serving
            cursor.execute("SELECT 1")
            assert cursor.fetchone() == (1,)
    finally:
        mine.close()
        other.close()


class _Crossed:
    """A connection whose socket is one backend's and whose pg_backend_pid() is another's: what a pid from
    another machine or container that happens to exist here looks like."""

    def __init__(self, socket_of, pid_of):
        self.pgconn, self.cursor = socket_of.pgconn, pid_of.cursor


@pytest.mark.django_db
def test_a_process_that_does_not_serve_this_connection_is_left_alone():
    mine, other = _new_connection(), _new_connection()
    try:
        other_pid = _backend(other)
        base, group = os.getpriority(os.PRIO_PROCESS, other_pid), _autogroup_nice(other_pid)
        assert priority.lower_backend(_Crossed(mine, other), min(base + 5, 19)) is False
        assert os.getpriority(os.PRIO_PROCESS, other_pid) == base
        assert _autogroup_nice(other_pid) == group
    finally:
        mine.close()
        other.close()


def test_only_the_calling_thread_is_lowered_and_threads_it_starts_inherit_it():
    seen = {}

    def child() -> None:
        seen["child"] = os.getpriority(os.PRIO_PROCESS, 0)

    before = os.getpriority(os.PRIO_PROCESS, 0)
    lower = min(before + 5, 19)

    def background() -> None:
        seen["lowered"] = priority.lower_this_thread(lower)
        seen["thread"] = os.getpriority(os.PRIO_PROCESS, 0)
        started = threading.Thread(target=child)
        started.start()
        started.join()

    thread = threading.Thread(target=background)
    thread.start()
    thread.join()
    assert seen == {"lowered": True, "thread": lower, "child": lower}
    assert os.getpriority(os.PRIO_PROCESS, 0) == before
