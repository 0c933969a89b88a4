"""The rate limit per host: one schedule shared by every process (Redis), or per process without Redis."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time

from sources.web import pacing
from tests.conftest import ROOT

FETCH_TWO = """
import os, sys, time
import django
django.setup()
from sources.web import pacing
from sources.web.fetch import fetch
pacing.HOST_INTERVAL = 0.5
start = float(sys.argv[1])
time.sleep(max(0.0, start - time.time()))
for path in sys.argv[3:]:
    fetch(sys.argv[2] + path)
"""


def assert_slotted(times: list[float], *, interval: float, late: float = 0.15) -> None:
    """times (sorted) came in slots interval apart: the k-th at least k x interval after the first
    (less `late`, the most the first request may have left after its own slot)."""
    since_first = [round(t - times[0], 3) for t in times]
    assert all(since_first[k] >= k * interval - late for k in range(len(times))), since_first


def test_two_processes_share_one_schedule_per_host(site):
    for path in ("/a", "/b", "/c", "/d"):
        site.pages[path] = "<p>x</p>"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ragweb.settings", "SOURCES_ALLOW_PRIVATE": "1",
           "RAGWEB_WARM_UP": "0"}
    start = time.time() + 4  # both send their first request at the same moment
    processes = [subprocess.Popen([sys.executable, "-c", FETCH_TWO, str(start), site.base_url, *paths], env=env,
                                  cwd=ROOT, stderr=subprocess.PIPE) for paths in (("/a", "/b"), ("/c", "/d"))]
    for process in processes:
        assert process.wait(timeout=60) == 0, process.stderr.read().decode()
    # Each process reads robots.txt (its own cache) and two pages: six requests in slots 0.5 s apart.
    # A request may leave after its slot (a busy machine), never before: the k-th arrives at least
    # k x 0.5 s after the first, give or take the first one's own lateness. Without a shared schedule
    # the two processes' requests would arrive in pairs.
    assert len(site.requests) == 6
    assert_slotted(sorted(r.time for r in site.requests), interval=0.5)


def test_without_redis_one_process_still_spaces_its_requests(settings, caplog, monkeypatch):
    monkeypatch.setattr(pacing, "HOST_INTERVAL", 0.3)
    settings.SOURCES_PACING_URL = "redis://127.0.0.1:9/0"  # nothing listens on the discard port
    host = f"no-redis.example:{time.monotonic_ns()}"
    with caplog.at_level(logging.WARNING, logger="sources.web.pacing"):
        slots = [pacing.book_slot(host) for _ in range(3)]
    assert [round(b - a, 2) for a, b in zip(slots, slots[1:], strict=False)] == [0.3, 0.3]
    assert "pacing per process only, Redis unavailable" in caplog.text


def test_hosts_are_paced_separately(monkeypatch):
    monkeypatch.setattr(pacing, "HOST_INTERVAL", 5)
    now = time.time()
    first = pacing.book_slot(f"one.example:{time.monotonic_ns()}")
    other = pacing.book_slot(f"two.example:{time.monotonic_ns()}")
    assert first - now < 0.5 and other - now < 0.5
