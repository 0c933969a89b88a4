"""`make bench-replica` = `python -m tests.replicas.measure`: the replica figures of docs/scaling.md.

Starts a standby of the embedded Postgres (tests/replicas/standby.py) and prints: the time to make
and start it, the routing decision's cost with the replica's state cached, the lag check's cost, and
how long after its commit the standby replays a publish-sized write (ROWS rows of 800 characters and
a 384-d vector in one transaction, in a scratch table dropped afterwards).
"""

from __future__ import annotations

import copy
import os
import time
import timeit

import django

ROWS = 20_000


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragweb.settings")
    django.setup()
    from django.conf import settings
    from django.db import connections
    from django.db.utils import load_backend

    from replicas import health, routing
    from tests.replicas.standby import Standby

    primary = connections["default"].settings_dict
    node = Standby(primary, name="bench-replica")
    started = time.perf_counter()
    node.create()
    print(f"pg_basebackup -R + start: {time.perf_counter() - started:.1f} s")
    try:
        config = copy.deepcopy(primary)
        config.update(PORT=str(node.port), OPTIONS={"connect_timeout": 2})
        connections["replica0"] = load_backend(config["ENGINE"]).DatabaseWrapper(config, "replica0")
        settings.REPLICA_DATABASES = ["replica0"]
        health.state("replica0")
        n = 20_000
        per = timeit.timeit(lambda: routing._choose(frozenset({"corpus"})), number=n) / n
        print(f"routing decision, state cached: {per * 1e6:.1f} µs per search")
        per = timeit.timeit(lambda: health.state("replica0", fresh=True), number=200) / 200
        print(f"lag check: {per * 1e3:.2f} ms, once per replicas.health.CHECK_SECONDS per process")
        with connections["default"].cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS bench_replica_probe")
            cursor.execute("CREATE TABLE bench_replica_probe (id bigint, body text, embedding vector(384))")
        time.sleep(1)
        with connections["default"].cursor() as cursor:
            began = time.perf_counter()
            cursor.execute("INSERT INTO bench_replica_probe SELECT g, repeat('x', 800), "
                           "(SELECT array_agg(random())::vector FROM generate_series(1, 384) WHERE g > 0) "
                           "FROM generate_series(1, %s) g", [ROWS])
            committed = time.perf_counter()
            cursor.execute("SELECT pg_current_wal_lsn()")
            (lsn,) = cursor.fetchone()
        worst = 0.0
        with connections["replica0"].cursor() as cursor:
            while True:
                cursor.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [lsn])
                (replayed,) = cursor.fetchone()
                worst = max(worst, health.state("replica0", fresh=True).lag_seconds or 0.0)
                if replayed:
                    break
                time.sleep(0.05)
        replay = time.perf_counter() - committed
        print(f"{ROWS:,}-row write: {committed - began:.2f} s on the primary, replayed {replay:.2f} s after its "
              f"commit (largest lag read meanwhile: {worst:.2f} s)")
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"load average: {load}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
        with connections["default"].cursor() as cursor:
            cursor.execute("DROP TABLE bench_replica_probe")
    finally:
        connections["replica0"].close()
        node.remove()


if __name__ == "__main__":
    main()
