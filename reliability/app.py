"""The app under test, started the way `make run` starts it (scripts/run.py), with its own data folder
and ports, plus the handles the harness needs: HTTP requests, the worker's processes, the embedded
Postgres and Redis, and Django's ORM on the app's database for the checks."""

from __future__ import annotations

import contextlib
import http.client
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def load_services_module():
    """scripts/services.py (a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("ragweb_services", ROOT / "scripts" / "services.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def configure_django(var: Path, pg_port: int, redis_port: int) -> None:
    """Point this process's Django at the app's database and broker (call before django.setup())."""
    for name in list(os.environ):
        if name.startswith(("DATABASE_URL", "CELERY_")):
            del os.environ[name]
    os.environ.update(RAGWEB_VAR_DIR=str(var), RAGWEB_PG_PORT=str(pg_port), RAGWEB_REDIS_PORT=str(redis_port),
                      DJANGO_SETTINGS_MODULE="ragweb.settings", RAGWEB_WARM_UP="0", LOG_LEVEL="WARNING")
    import django

    django.setup()


class Dropped(Exception):
    """The connection failed or closed without a complete response."""


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float

    def json(self):
        return json.loads(self.body)

    @property
    def is_json(self) -> bool:
        return self.headers.get("content-type", "").startswith("application/json")


class App:
    """scripts/run.py in its own process group, with its own var folder and ports."""

    def __init__(self, var: Path, *, fresh: bool = True) -> None:
        self.var = var
        if fresh and var.exists():
            services = load_services_module()
            with self._service_env():
                for service in (services.Redis(var), services.Postgres(var)):
                    with contextlib.suppress(Exception):
                        service.stop()
            shutil.rmtree(var)
        self.port, self.pg_port, self.redis_port = free_port(), free_port(), free_port()
        self.process: subprocess.Popen | None = None
        self.extra_env: dict[str, str] = {}
        # The server folder sources may read (SOURCES_FOLDERS): the consent section's hard-link check.
        self.folders = var.parent / "folders"
        self.log_path = var.parent / f"{var.name}-run.log"

    # --- environment and lifecycle ---

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "DJANGO_",
                                                                         "LLM_"))}
        env.update(PORT=str(self.port), RAGWEB_PG_PORT=str(self.pg_port), RAGWEB_REDIS_PORT=str(self.redis_port),
                   RAGWEB_VAR_DIR=str(self.var), LOG_LEVEL="WARNING")
        # The broker hands a dead worker's task out again after this long (make run: 180 s); shorter
        # here so the fault runs finish sooner. The harness measures recovery, not this timeout.
        env["CELERY_VISIBILITY_TIMEOUT"] = "60"
        # The load runs send 50 clients' requests with one token: the per-user throttles would
        # answer most of them 429 and measure the throttle, not the search.
        env["API_THROTTLE"] = "off"
        # The app loads its model at start as `make run` does (the harness's own process does not).
        env["RAGWEB_WARM_UP"] = "1"
        # The fake LLM endpoints listen on 127.0.0.1, as a local llama.cpp would: the operator allows it.
        env["LLM_PRIVATE_HOSTS"] = "127.0.0.1"
        env["SOURCES_FOLDERS"] = str(self.folders)
        env.update(self.extra_env)
        return env

    @contextlib.contextmanager
    def _service_env(self):
        saved = {k: os.environ.get(k) for k in ("RAGWEB_PG_PORT", "RAGWEB_REDIS_PORT")}
        os.environ["RAGWEB_PG_PORT"], os.environ["RAGWEB_REDIS_PORT"] = str(getattr(self, "pg_port", 0)), \
            str(getattr(self, "redis_port", 0))
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def start(self, *, timeout: float = 600) -> None:
        self.var.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("a")
        self.process = subprocess.Popen([PY, "scripts/run.py"], cwd=ROOT, env=self.env(), stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self.wait_healthy(timeout)

    def wait_healthy(self, timeout: float = 300) -> dict:
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"make run exited ({self.process.returncode}); see {self.log_path}")
            last = self.health()
            if last and last["code"] == 200:
                return last
            time.sleep(1)
        raise RuntimeError(f"the app was not healthy within {timeout:.0f}s (last /healthz: {last}); "
                           f"see {self.log_path}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGINT)  # Ctrl-C
        try:
            self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)

    def restart(self, **extra_env: str) -> None:
        """Stop the app and its services and start them again with `extra_env`. The database restarts
        too, so this process's own connections (the checks that write users through the ORM) are closed
        and open again on their next query: a section after a restart would otherwise fail on a
        connection the old server terminated."""
        self.stop()
        self.extra_env = extra_env
        self.start()
        _reconnect()

    def manage(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=self.env(), capture_output=True, text=True,
                              check=check, timeout=timeout)

    # --- HTTP ---

    def request(self, method: str, path: str, *, body: bytes | None = None, json_body=None,
                headers: dict[str, str] | None = None, token: str | None = None, timeout: float = 60,
                connection: http.client.HTTPConnection | None = None) -> Response:
        """One request; raises Dropped when no complete response arrives."""
        headers = dict(headers or {})
        if json_body is not None:
            body = json.dumps(json_body).encode()
            headers.setdefault("Content-Type", "application/json")
        if token:
            headers["Authorization"] = f"Token {token}"
        own = connection is None
        conn = connection or http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        started = time.perf_counter()
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise Dropped(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        finally:
            if own:
                conn.close()
        return Response(response.status, {k.lower(): v for k, v in response.getheaders()}, data,
                        time.perf_counter() - started)

    def health(self) -> dict | None:
        try:
            response = self.request("GET", "/healthz", timeout=15)
        except Dropped:
            return None
        try:
            return {**response.json(), "code": response.status}
        except ValueError:
            return {"code": response.status}

    # --- processes ---

    def run_process(self) -> psutil.Process:
        return psutil.Process(self.process.pid)

    def worker(self) -> psutil.Process | None:
        """The Celery worker's main process (its pool process is its child)."""
        from lib.process_name import WORKER

        for child in self.run_process().children():
            with contextlib.suppress(psutil.Error):
                if child.name() == WORKER:
                    return child
        return None

    def worker_pool(self) -> list[psutil.Process]:
        """The worker's pool processes: its children but the scheduler it forks (`worker --beat`)."""
        from ragweb.celery import SCHEDULER_NAME

        worker = self.worker()
        pool = []
        for child in worker.children() if worker else []:
            with contextlib.suppress(psutil.Error):
                if child.name() != SCHEDULER_NAME:
                    pool.append(child)
        return pool

    def web_processes(self) -> list[psutil.Process]:
        from lib.process_name import WEB_SERVER

        for child in self.run_process().children():
            with contextlib.suppress(psutil.Error):
                if child.name() == WEB_SERVER:
                    return [child, *child.children()]
        return []

    def postgres_processes(self) -> list[psutil.Process]:
        pgdata = str(self.var / "pgdata")
        found = []
        for process in psutil.process_iter(["cmdline"]):
            with contextlib.suppress(psutil.Error):
                if pgdata in " ".join(process.info["cmdline"] or []):
                    found.append(process)
                    found.extend(process.children())
        return found

    def kill_worker(self) -> int | None:
        """kill -9 the worker's whole process group (main and pool processes); returns the main pid."""
        worker = self.worker()
        if worker is None:
            return None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        return worker.pid

    def wait_for_worker(self, *, other_than: int | None = None, timeout: float = 120) -> psutil.Process:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            worker = self.worker()
            if worker is not None and worker.pid != other_than and worker.children():
                return worker
            time.sleep(0.3)
        raise RuntimeError(f"no worker came back within {timeout:.0f}s")

    def postgres(self):
        with self._service_env():
            return load_services_module().Postgres(self.var)

    def redis(self):
        with self._service_env():
            return load_services_module().Redis(self.var)

    def restart_postgres(self, down_seconds: float) -> None:
        services = load_services_module()
        with self._service_env():
            services.Postgres(self.var).stop()
            time.sleep(down_seconds)
            services.Postgres(self.var).start()
        _reconnect()

    def restart_redis(self, down_seconds: float) -> None:
        services = load_services_module()
        with self._service_env():
            services.Redis(self.var).stop()
            time.sleep(down_seconds)
            services.Redis(self.var).start()


def _reconnect() -> None:
    """Close this process's database connections (Django opens them again when next used)."""
    from django.db import connections

    connections.close_all()


def peak_rss(process: psutil.Process) -> int:
    """The process's peak resident set size so far (VmHWM), in bytes."""
    for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def reset_peak_rss(process: psutil.Process) -> None:
    """Start VmHWM again from the current RSS (Linux: clear_refs 5)."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{process.pid}/clear_refs").write_text("5")
