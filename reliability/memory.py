"""Memory of the app's own processes (make run's parent, which loads the model and forks the rest;
the web server's master and workers, the Celery worker, its pool and the scheduler it forks; not
Postgres or Redis), read from /proc.

Two measures per process: RSS (resident pages, each shared page counted in every process that maps
it) and PSS from /proc/PID/smaps_rollup (a page shared by n processes counts 1/n in each, so the sum
over processes is the memory they really hold together). Targets are judged on the PSS sum: with the
model loaded once before forking, RSS would count the shared model in every process.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from lib.process_name import SOURCES_WORKER, WEB_SERVER, WORKER
from ragweb.celery import SCHEDULER_NAME

MB = 1024 ** 2


@dataclass(frozen=True)
class ProcessMemory:
    role: str  # "make run", "web master", "web worker", "celery worker", "celery pool", "scheduler"
    pid: int
    rss: int  # bytes
    pss: int  # bytes


def read_memory(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of process `pid` in bytes, from /proc/PID/smaps_rollup. Raises OSError when the
    process is gone or unreadable."""
    rss = pss = 0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name == "Rss":
            rss = int(rest.split()[0]) * 1024
        elif name == "Pss":
            pss = int(rest.split()[0]) * 1024
    return rss, pss


def _role(process: psutil.Process, parent_role: str | None) -> str | None:
    if parent_role is not None:  # a child of a process already named: its worker, pool process or scheduler
        if parent_role == "celery worker" and process.name() == SCHEDULER_NAME:  # forked by `worker --beat`
            return "scheduler"
        return {"web master": "web worker", "celery worker": "celery pool"}.get(parent_role, parent_role)
    # make run's children are forked without exec: their command line is the parent's, their name their own.
    return {WEB_SERVER: "web master", WORKER: "celery worker", SOURCES_WORKER: "celery worker"}.get(
        process.name())  # None: not the app's


def app_processes(supervisor: psutil.Process) -> list[tuple[str, psutil.Process]]:
    """(role, process) of the app processes of make run's process `supervisor` (scripts/run.py):
    itself (it holds the model its children share), its web and worker children and their children
    (web workers; the Celery pool and scheduler). A manage.py subprocess of the run is not the app's."""
    found: list[tuple[str, psutil.Process]] = [("make run", supervisor)]
    for child in supervisor.children():
        with contextlib.suppress(psutil.Error):
            role = _role(child, None)
            if role is None:
                continue
            found.append((role, child))
            found += [(_role(grandchild, role), grandchild) for grandchild in child.children(recursive=True)]
    return found


def snapshot(processes: list[tuple[str, psutil.Process]]) -> list[ProcessMemory]:
    """The memory of each process still alive."""
    measured = []
    for role, process in processes:
        with contextlib.suppress(OSError):
            rss, pss = read_memory(process.pid)
            measured.append(ProcessMemory(role, process.pid, rss, pss))
    return measured


def cpu_seconds(processes: list[tuple[str, psutil.Process]]) -> float:
    """The CPU time (user + system) the processes still alive have used so far."""
    total = 0.0
    for _, process in processes:
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            total += times.user + times.system
    return total


def wait_until_quiet(processes: list[tuple[str, psutil.Process]], *, window: float = 10.0,
                     busy: float = 0.2, timeout: float = 300.0) -> float:
    """Wait until the processes together use less than `busy` CPU seconds in `window` seconds (the
    work queued at start-up, such as the demo corpus's sentence-vector fills, is done: "idle" is
    read then, not in the middle of a task); give up after `timeout`. Returns the seconds waited.

    An absolute and small `busy` (2% of a core by default): on a machine shared by many, a working
    process may get a tenth of a core, an idle app's heartbeats use milliseconds."""
    started = time.monotonic()
    used = cpu_seconds(processes)
    while time.monotonic() - started < timeout:
        time.sleep(window)
        now = cpu_seconds(processes)
        if now - used < busy:
            break
        used = now
    return time.monotonic() - started


def total_pss(measured: list[ProcessMemory]) -> int:
    return sum(m.pss for m in measured)


def table(label: str, measured: list[ProcessMemory]) -> str:
    """One line per process and the sums, in MB."""
    lines = [f"{label}:", f"  {'process':<16} {'pid':>8} {'RSS MB':>9} {'PSS MB':>9}"]
    for m in measured:
        lines.append(f"  {m.role:<16} {m.pid:>8} {m.rss / MB:>9.1f} {m.pss / MB:>9.1f}")
    lines.append(f"  {'total':<16} {'':>8} {sum(m.rss for m in measured) / MB:>9.1f} {total_pss(measured) / MB:>9.1f}")
    return "\n".join(lines)
