"""`make measure-memory`'s reading of the app's processes: each one found under make run's process by
its role, with its RSS and PSS, and printed one line per process with the sums."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import psutil

from lib.process_name import WEB_SERVER, WORKER
from ragweb.celery import SCHEDULER_NAME
from reliability import memory

# A stand-in for scripts/run.py: a parent holding memory, a web server (named as make run names it) with
# one worker, a Celery worker with one pool process and the scheduler it forks (named as ragweb.celery
# names it), and a process that is not the app's (a manage.py command of the run: its name is neither).
SUPERVISOR = r"""
import subprocess, sys, time
held = bytearray(20 * 1024 * 1024)
holder = "import subprocess, sys, time; from lib.process_name import set_process_name; x = bytearray(20 << 20); "
grandchild = "import time; y = bytearray(10 << 20); time.sleep(120)"
scheduler = "from lib.process_name import set_process_name; set_process_name(SCHEDULER); " + grandchild
def spawn(code):
    return f"subprocess.Popen([sys.executable, '-c', {code!r}]); "
subprocess.Popen([sys.executable, "-c", holder + "set_process_name(WEB); " + spawn(grandchild) + "time.sleep(120)"])
subprocess.Popen([sys.executable, "-c", holder + "set_process_name(WORKER); " + spawn(grandchild) + spawn(scheduler)
                  + "time.sleep(120)"])
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "manage.py", "ingest"])
time.sleep(120)
""".replace("SCHEDULER", repr(SCHEDULER_NAME)).replace("WEB", repr(WEB_SERVER)).replace("WORKER", repr(WORKER))


def names(processes: list[psutil.Process]) -> list[str]:
    found = []
    for process in processes:
        try:
            found.append(process.name())
        except psutil.Error:  # gone meanwhile
            pass
    return found


def test_it_reads_rss_and_pss_of_a_process():
    rss, pss = memory.read_memory(os.getpid())
    assert rss > 10 * memory.MB and 0 < pss <= rss


def test_it_prints_each_app_process_with_its_role_and_memory():
    supervisor = subprocess.Popen([sys.executable, "-c", SUPERVISOR])
    try:
        parent = psutil.Process(supervisor.pid)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and SCHEDULER_NAME not in names(parent.children(recursive=True)):
            time.sleep(0.2)
        time.sleep(1)  # the bytearrays allocated
        found = memory.app_processes(parent)
        assert sorted(role for role, _ in found) == ["celery pool", "celery worker", "make run", "scheduler",
                                                     "web master", "web worker"]
        assert found[0] == ("make run", parent)
        measured = memory.snapshot(found)
        assert len(measured) == 6
        assert all(m.rss >= 10 * memory.MB and 0 < m.pss <= m.rss for m in measured)
        assert memory.total_pss(measured) == sum(m.pss for m in measured)
        printed = memory.table("idle", measured)
        for m in measured:
            line = next(line for line in printed.splitlines() if f" {m.pid} " in line)
            assert line.split()[:-2] == m.role.split() + [str(m.pid)]
            assert float(line.split()[-1]) == round(m.pss / memory.MB, 1)
        total = printed.splitlines()[-1]
        assert re.match(r"\s+total\s+[\d.]+\s+[\d.]+$", total)
        assert float(total.split()[-1]) == round(memory.total_pss(measured) / memory.MB, 1)
    finally:
        for process in psutil.Process(supervisor.pid).children(recursive=True):
            process.kill()
        supervisor.kill()
        supervisor.wait(timeout=10)


BUSY_THEN_QUIET = """
import time
end = time.monotonic() + 3
while time.monotonic() < end:
    pass
time.sleep(60)
"""


def test_idle_is_read_once_the_processes_stop_using_the_cpu():
    busy = subprocess.Popen([sys.executable, "-c", BUSY_THEN_QUIET])
    try:
        watched = [("celery pool", psutil.Process(busy.pid))]
        waited = memory.wait_until_quiet(watched, window=1.0, busy=0.02, timeout=30)
        assert 3 <= waited < 15  # not before its 3 s of work were over
        assert memory.wait_until_quiet(watched, window=1.0, busy=0.02, timeout=30) < 2.5  # quiet at once now
    finally:
        busy.kill()
        busy.wait(timeout=10)


def test_waiting_for_quiet_gives_up_after_its_timeout():
    spinning = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        waited = memory.wait_until_quiet([("celery pool", psutil.Process(spinning.pid))], window=0.5, busy=0.02,
                                         timeout=2)
        assert 2 <= waited < 4
    finally:
        spinning.kill()
        spinning.wait(timeout=10)
