"""Background work that yields the CPU to interactive work (searches) on the same machine.

Linux schedules by nice value (a higher one gets a smaller share when the CPU is contended, and all of it when
nobody else wants it), per thread, and, with the kernel's autogroups (`/proc/sys/kernel/sched_autogroup_enabled`,
on by default), first between sessions: a nice value only ranks a thread among its own session's. So:

- the calling thread: `os.setpriority` (threads it starts after inherit it; `make run` forks the worker and the
  web server from one session, so a worker's nice value ranks it below the web server's threads);
- the Postgres backend serving a connection, when that server runs on this machine (the embedded one): each
  backend is a session of its own (the postmaster's children call setsid), so both its nice value and its
  autogroup's (`/proc/PID/autogroup`, which holds only it) are set. The backend is found by `pg_backend_pid()`
  and checked to be the process serving exactly this connection (its process title names the client's
  address and port, ours), so no other process is ever touched.

Used by the Celery pool processes (ragweb.celery) and `bench_scale --sustained --nice`. Measured at a million
chunks (docs/scaling.md, "A merge that keeps up"): searches' p95 during a sustained upload ~250 -> ~110 ms, the
upload at half its rate; beside a job at a higher priority, background work at nice 19 gets nothing until it ends.

Raising a nice value needs no privilege for one's own processes (lowering one back does); anything refused is
reported as False, never raised.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

# The nice value of background work (Linux: 0 normal .. 19 lowest).
BACKGROUND_NICE = 19


def lower_this_thread(nice: int = BACKGROUND_NICE) -> bool:
    """Set the calling thread's nice value (Linux: per thread; threads started after inherit it)."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    except OSError:
        return False
    return True


def _client_address(raw) -> tuple[str, int] | None:
    """(host, port) of this end of a psycopg connection's TCP socket; None for a Unix socket."""
    try:
        with socket.socket(fileno=os.dup(raw.pgconn.socket)) as sock:
            if sock.family not in (socket.AF_INET, socket.AF_INET6):
                return None
            host, port = sock.getsockname()[:2]
    except (OSError, AttributeError, ValueError):
        return None
    return host, port


def lower_backend(raw, nice: int = BACKGROUND_NICE) -> bool:
    """Set the nice value (and, where the kernel has them, its autogroup's) of the local Postgres backend
    serving the psycopg connection `raw`. False, touching nothing, when the server is not on this machine (no
    process of that pid serves our address and port) or the kernel refuses."""
    address = _client_address(raw)
    if address is None:
        return False
    with raw.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = int(cursor.fetchone()[0])
    proc = Path(f"/proc/{pid}")
    try:
        title = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False  # not a process here: a server on another machine or in another container
    host, port = address
    if not title.startswith("postgres:") or f"{host}({port})" not in title:
        return False  # a pid of another machine that happens to exist here
    try:
        os.setpriority(os.PRIO_PROCESS, pid, nice)
        if (proc / "autogroup").exists():
            (proc / "autogroup").write_text(f"{nice}\n")
    except OSError:
        return False
    return True
