"""A hot standby of the embedded Postgres, for the replica tests and `make bench-replica`:
pg_basebackup -R from the primary into var/ (the postgres user can reach it), its own free port."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _services():
    # By path, as the Makefile runs it: scripts/ is no package.
    spec = importlib.util.spec_from_file_location("ragweb_services", ROOT / "scripts" / "services.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Standby:
    """A hot standby streaming from the test's primary, in var/ (the postgres user can reach it)."""

    def __init__(self, primary: dict, name: str = ""):
        self.services = _services()
        self.primary = primary
        self.port = _free_port()
        self.dir = ROOT / "var" / (name or f"test-replica-{os.getpid()}")
        self.data = self.dir / "data"
        self.env = dict(os.environ, PGPASSWORD=primary["PASSWORD"])

    def _run(self, *command: str) -> None:
        subprocess.run([*self.services._as_pg_user(), *command], check=True, env=self.env,
                       capture_output=True, timeout=120)

    def create(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.services._ensure_pg_user([self.dir])
        self._run(self.services.pg_bin("pg_basebackup"), "-h", str(self.primary["HOST"]),
                  "-p", str(self.primary["PORT"]), "-U", self.primary["USER"], "-D", str(self.data),
                  "-R", "-X", "stream", "-c", "fast")
        self.start()

    def start(self) -> None:
        options = (f"-c port={self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
                   "-c shared_buffers=32MB")  # max_connections as the primary's: a standby may not have fewer
        self._run(self.services.pg_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "log"),
                  "-o", options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        subprocess.run([*self.services._as_pg_user(), self.services.pg_bin("pg_ctl"), "-D", str(self.data),
                        "-m", "immediate", "-w", "stop"], capture_output=True, timeout=60)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


