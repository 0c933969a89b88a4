"""Each pytest-xdist worker gets Redis databases of its own (loaded with `-p` from pyproject's addopts,
so before pytest-env and the settings read RAGWEB_REDIS_DB).

A test run takes three databases from RAGWEB_REDIS_DB (broker, results, sign-in counts: ragweb.settings).
Worker gw0 keeps the run's (3-5), gw1 takes 9-11 (6-8 are `make bench-workers'`): two workers sharing a
broker would run each other's Celery tasks against the wrong test database.
"""

from __future__ import annotations

import os

FIRST_DATABASE = {"gw0": 3, "gw1": 9}

_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker:
    if _worker not in FIRST_DATABASE:
        raise RuntimeError(f"tests/xdist_redis.py has Redis databases for two workers, not {_worker}: run -n 2 or less")
    os.environ["RAGWEB_REDIS_DB"] = str(FIRST_DATABASE[_worker])
