"""The embedded Postgres and Redis: start, stop, restart, and recovery after kill -9.

Runs a second, private pair of servers (own var dir and ports) so the suite's servers are untouched.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PG_PORT, REDIS_PORT = 54399, 63899


@pytest.fixture
def var_dir(tmp_path_factory):
    # Under the project (not /tmp) so the unprivileged postgres user can traverse it like var/.
    path = ROOT / "var" / f"test-services-{os.getpid()}"
    yield path
    services("stop", path)
    subprocess.run(["rm", "-rf", str(path)], check=False)


def services(action: str, var: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, RAGWEB_PG_PORT=str(PG_PORT), RAGWEB_REDIS_PORT=str(REDIS_PORT))
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "services.py"), action, "--var", str(var)],
                          env=env, capture_output=True, text=True, timeout=180)


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def query(*statements: str) -> str:
    """Run the statements in order; the value of the last one's first row."""
    import psycopg

    password = (ROOT / "var" / f"test-services-{os.getpid()}" / "pg_password").read_text().strip()
    with psycopg.connect(f"postgresql://postgres:{password}@127.0.0.1:{PG_PORT}/ragweb", autocommit=True) as conn:
        for sql in statements:
            cursor = conn.execute(sql)
        return str(cursor.fetchone()[0])


def redis_client():
    import redis

    return redis.Redis(host="127.0.0.1", port=REDIS_PORT, socket_timeout=2)


def postmaster_pid(var: Path) -> int:
    return int((var / "pgdata" / "postmaster.pid").read_text().splitlines()[0])


def redis_pid(var: Path) -> int:
    return int((var / "run" / "redis.pid").read_text().strip())


def wait_closed(port: int) -> None:
    deadline = time.time() + 15
    while port_open(port) and time.time() < deadline:
        time.sleep(0.1)


def test_start_creates_database_with_pgvector_and_redis(var_dir):
    out = services("start", var_dir)
    assert out.returncode == 0, out.stderr
    assert f"127.0.0.1:{PG_PORT}/ragweb" in out.stdout
    assert query("SELECT extversion FROM pg_extension WHERE extname = 'vector'").startswith("0.")
    assert redis_client().ping() is True
    assert services("status", var_dir).returncode == 0


def test_stop_then_start_keeps_data(var_dir):
    assert services("start", var_dir).returncode == 0
    query("CREATE TABLE IF NOT EXISTS kept (v int)", "INSERT INTO kept VALUES (42) RETURNING v")
    redis_client().set("kept", "yes")
    assert services("stop", var_dir).returncode == 0
    assert not port_open(PG_PORT) and not port_open(REDIS_PORT)
    status = services("status", var_dir)
    assert status.returncode == 1 and "postgres: stopped" in status.stdout
    assert services("start", var_dir).returncode == 0
    assert query("SELECT max(v) FROM kept") == "42"
    assert redis_client().get("kept") == b"yes"


def test_start_is_idempotent_while_running(var_dir):
    assert services("start", var_dir).returncode == 0
    pid = postmaster_pid(var_dir)
    assert services("start", var_dir).returncode == 0
    assert postmaster_pid(var_dir) == pid


def test_restart_after_kill_9_of_both_servers(var_dir):
    assert services("start", var_dir).returncode == 0
    query("CREATE TABLE IF NOT EXISTS survived (v int)", "INSERT INTO survived VALUES (7) RETURNING v")
    old_pg, old_redis = postmaster_pid(var_dir), redis_pid(var_dir)
    os.kill(old_pg, signal.SIGKILL)
    os.kill(old_redis, signal.SIGKILL)
    wait_closed(PG_PORT)
    wait_closed(REDIS_PORT)
    assert services("status", var_dir).returncode == 1

    out = services("start", var_dir)
    assert out.returncode == 0, out.stderr
    assert postmaster_pid(var_dir) != old_pg
    assert redis_pid(var_dir) != old_redis
    assert query("SELECT max(v) FROM survived") == "7"
    assert redis_client().ping() is True


def test_start_explains_a_port_taken_by_another_server(var_dir):
    with socket.create_server(("127.0.0.1", PG_PORT)):
        out = services("start", var_dir)
    assert out.returncode != 0
    assert f"port {PG_PORT} is taken by another server" in out.stderr
    assert "RAGWEB_PG_PORT" in out.stderr


def test_postgres_asks_for_the_password_kept_private_under_var(var_dir):
    import psycopg

    assert services("start", var_dir).returncode == 0
    password_file = var_dir / "pg_password"
    assert password_file.stat().st_mode & 0o777 == 0o600
    assert var_dir.stat().st_mode & 0o077 == 0o011  # others may pass through to pgdata, not list
    assert (var_dir / "media").stat().st_mode & 0o777 == 0o700
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(f"postgresql://postgres@127.0.0.1:{PG_PORT}/ragweb", connect_timeout=5)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(f"postgresql://postgres:guess@127.0.0.1:{PG_PORT}/ragweb", connect_timeout=5)
    assert query("SELECT current_user") == "postgres"


def test_a_cluster_that_trusted_everyone_is_converted_at_start(var_dir):
    import psycopg

    assert services("start", var_dir).returncode == 0
    # As clusters made before passwords were: trust for every local connection.
    (var_dir / "pgdata" / "pg_hba.conf").write_text("host all all 127.0.0.1/32 trust\n")
    query("SELECT pg_reload_conf()")
    psycopg.connect(f"postgresql://postgres@127.0.0.1:{PG_PORT}/ragweb", connect_timeout=5).close()
    (var_dir / "media" / "private.pdf").write_bytes(b"%PDF")
    (var_dir / "media" / "private.pdf").chmod(0o644)

    assert services("start", var_dir).returncode == 0
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(f"postgresql://postgres@127.0.0.1:{PG_PORT}/ragweb", connect_timeout=5)
    assert query("SELECT 1") == "1"
    assert (var_dir / "media" / "private.pdf").stat().st_mode & 0o777 == 0o600
