"""Per-user quotas are counted in Redis (accounts.quotas), so a limit holds across web processes
(gunicorn's workers, replicas) and under a burst of parallel requests."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.cache import caches

from accounts.quotas import UserQuota, wait_seconds

ROOT = Path(__file__).resolve().parents[2]


class FiveAnHour(UserQuota):
    scope = "test_five_an_hour"
    rate = "5/hour"


def _request(pk: int):
    return SimpleNamespace(user=SimpleNamespace(pk=pk, is_authenticated=True), META={}, headers={})


@pytest.fixture(autouse=True)
def clean():
    caches["quotas"].clear()
    yield
    caches["quotas"].clear()


def test_a_burst_of_parallel_requests_gets_exactly_the_quota():
    with ThreadPoolExecutor(max_workers=20) as pool:
        waits = list(pool.map(lambda _: wait_seconds(FiveAnHour, _request(7001)), range(40)))

    assert waits.count(None) == 5
    assert all(0 < wait <= 3600 for wait in waits if wait is not None)
    assert wait_seconds(FiveAnHour, _request(7002)) is None  # another user's budget


def test_requests_counted_in_another_process_count_here():
    # Another web process (a gunicorn worker): the same Redis, its own memory.
    code = ("import django; django.setup()\n"
            "from types import SimpleNamespace\n"
            "from tests.accounts.test_quotas import FiveAnHour, _request\n"
            "from accounts.quotas import wait_seconds\n"
            "print([wait_seconds(FiveAnHour, _request(7003)) for _ in range(4)])\n")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ragweb.settings"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "[None, None, None, None]", done.stderr[-2000:]

    assert wait_seconds(FiveAnHour, _request(7003)) is None  # the fifth
    assert wait_seconds(FiveAnHour, _request(7003)) > 0


def test_without_redis_requests_go_through(settings):
    # (Changing CACHES makes Django build its caches again from the setting.)
    settings.CACHES = {**settings.CACHES, "quotas": {**settings.CACHES["quotas"],
                                                     "LOCATION": "redis://127.0.0.1:9/0"}}
    assert [wait_seconds(FiveAnHour, _request(7004)) for _ in range(7)] == [None] * 7
