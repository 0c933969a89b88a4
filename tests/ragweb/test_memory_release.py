"""lib.memory.release_freed_memory gives a process's freed heap back to the system, and every
Celery task ends with it (the worker does not keep a large document's peak while idle)."""

from __future__ import annotations

import subprocess
import sys

from celery import signals

from ragweb import celery as ragweb_celery

# Fills the heap with 200 MB of small objects (kept below the mmap threshold, so glibc serves them
# from its arena), frees them but one at the top (so the arena's top cannot shrink by itself), then
# prints the resident size before and after release_freed_memory().
PROBE = """
import gc
from lib.memory import release_freed_memory

def rss():
    return int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0]) // 1024

blocks = [bytearray(4000) for _ in range(50_000)]
keep = bytearray(4000)
del blocks
gc.collect()
before = rss()
assert release_freed_memory()
print(before, rss())
"""


def test_freed_heap_goes_back_to_the_system():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True,
                         env={"MALLOC_ARENA_MAX": "2", "PYTHONPATH": "."}).stdout
    before, after = map(int, out.split())
    assert before - after >= 100, (before, after)  # MB


def test_every_celery_task_ends_by_releasing_freed_memory():
    receivers = [r() for _, r in signals.task_postrun.receivers]
    assert ragweb_celery._give_back_what_the_task_freed in receivers


# Four threads each malloc() at once (held at a barrier): glibc gives each thread that allocates an arena
# of its own unless limited; malloc_stats() prints one "Arena N:" block per arena to stderr.
ARENAS = """
import ctypes, sys, threading
from lib.memory import limit_malloc_arenas
if sys.argv[1] != "unlimited":
    assert limit_malloc_arenas(int(sys.argv[1]))
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
barrier = threading.Barrier(4)
def allocate():
    barrier.wait()
    libc.malloc(1000)
    barrier.wait()
threads = [threading.Thread(target=allocate) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
libc.malloc_stats()
"""


def arenas(limit: str) -> int:
    done = subprocess.run([sys.executable, "-c", ARENAS, limit], capture_output=True, text=True, timeout=60,
                          check=True, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": "."})
    return sum(line.startswith("Arena ") for line in done.stderr.splitlines())


def test_the_malloc_arena_limit_set_in_a_running_process_holds_for_its_threads():
    # make run's parent sets it after it started (MALLOC_ARENA_MAX is read only at a process's start)
    # and the web workers it forks inherit it.
    assert arenas("unlimited") >= 4
    assert arenas("2") == 2
