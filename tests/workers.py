"""Start and stop a real Celery worker process for tests (used by the celery_worker_process fixture)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class WorkerHandle:
    proc: subprocess.Popen
    env: dict
    hostname: str
    log: Path


def worker_env(settings) -> dict:
    db = settings.DATABASES["default"]
    env = dict(os.environ)
    env["DATABASE_URL"] = (f"postgres://{db['USER']}:{db.get('PASSWORD') or ''}@{db['HOST']}:{db['PORT']}/"
                           f"{db['NAME']}")
    env["REDIS_URL"] = settings.REDIS_URL
    env["CELERY_VISIBILITY_TIMEOUT"] = str(settings.CELERY_VISIBILITY_TIMEOUT)
    env["DJANGO_SETTINGS_MODULE"] = "ragweb.settings"
    return env


def start_worker(settings, *, name: str = "test", concurrency: int = 1, wait: float = 60.0) -> WorkerHandle:
    from ragweb.celery import app

    hostname = f"{name}-{os.getpid()}-{time.monotonic_ns()}@localhost"
    # One log per pytest-xdist worker too: the two would truncate each other's.
    xdist = os.environ.get("PYTEST_XDIST_WORKER")
    log = ROOT / "var" / "log" / (f"worker-{name}-{xdist}.log" if xdist else f"worker-{name}.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    env = worker_env(settings)
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "ragweb", "worker", "--loglevel", "INFO", "--pool", "prefork",
         "--concurrency", str(concurrency), "--hostname", hostname, "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + wait
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"celery worker exited early; see {log}")
        replies = app.control.ping(destination=[hostname], timeout=0.5) or []
        if replies:
            return WorkerHandle(proc=proc, env=env, hostname=hostname, log=log)
    stop_worker(WorkerHandle(proc=proc, env=env, hostname=hostname, log=log))
    raise RuntimeError(f"celery worker did not answer within {wait}s; see {log}")


def kill_worker(handle: WorkerHandle) -> None:
    """kill -9 the whole worker process group (main process and pool children)."""
    try:
        os.killpg(handle.proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    handle.proc.wait(timeout=10)


def stop_worker(handle: WorkerHandle) -> None:
    if handle.proc.poll() is None:
        try:
            os.killpg(handle.proc.pid, signal.SIGTERM)
            handle.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            kill_worker(handle)
        except ProcessLookupError:
            pass
