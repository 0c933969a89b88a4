"""Measure a new user's first `make run` (docs/first-start.md): clone the repository afresh, run `make run` in
the clone with its own ports and pip cache, and print when each step began, until the app serves and the demo
corpus is ingested; then stop it and print the sizes of `.venv` and the pip cache.

    python scripts/first_start.py [--repo PATH] [--ref REF] [--pip-cache DIR] [--keep]

Without --pip-cache, pip's cache is a new empty folder (a cold first start: every wheel read from the index);
give the same folder twice to measure a second clone on the same machine (a warm cache). The steps are the
lines that make echoes (its recipe commands) and the progress lines of scripts/run.py ("[make run] ..."),
each with the seconds since the start; the clone is removed afterwards unless --keep.

Uses PORT, RAGWEB_PG_PORT and RAGWEB_REDIS_PORT from the environment (defaults 8000, 54329, 63799).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READY_LINE = "ragweb is running on"
# The demo corpus is ingested once the worker has run it: asked of the clone's own database.
DEMO_READY = ("from corpus.models import Document as D; q = D.objects.filter(collection__slug='demo'); "
              "print(q.count(), q.filter(status='ready').count())")
TIMEOUT_SECONDS = 3600.0


def size(path: Path) -> str:
    if not path.exists():
        return "-"
    out = subprocess.run(["du", "-sh", str(path)], capture_output=True, text=True).stdout
    return out.split()[0] if out else "-"


def is_step(line: str) -> bool:
    """A line that starts a step: a command make echoes (not indented output) or run.py's progress."""
    return line.startswith(("[make run]", "test -x", "PORT=")) or " -m pip " in line or " -m venv " in line


def healthy(port: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def demo_ingested(clone: Path) -> bool:
    out = subprocess.run([str(clone / ".venv" / "bin" / "python"), "manage.py", "shell", "-v", "0", "-c", DEMO_READY],
                         cwd=clone, capture_output=True, text=True).stdout.split()
    return len(out) == 2 and out[0] == out[1] != "0"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", default=str(ROOT), help="What to clone (default: this checkout).")
    parser.add_argument("--ref", help="A commit or branch to check out in the clone (default: the repo's HEAD).")
    parser.add_argument("--pip-cache", type=Path, help="pip's cache folder (default: a new empty one).")
    parser.add_argument("--keep", action="store_true", help="Keep the clone (and the temporary pip cache).")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="ragweb-first-start-"))
    work.chmod(0o755)  # the embedded Postgres runs as a user of its own (scripts/services.py): it must pass through
    clone = work / "ragweb"
    cache = args.pip_cache or work / "pip-cache"
    port = os.environ.get("PORT", "8000")
    env = {**os.environ, "PIP_CACHE_DIR": str(cache), "PORT": port}
    env.pop("VIRTUAL_ENV", None)
    subprocess.run(["git", "clone", "--quiet", args.repo, str(clone)], check=True)
    if args.ref:
        subprocess.run(["git", "checkout", "--quiet", args.ref], cwd=clone, check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True)
    print(f"{clone} ({commit.stdout.strip()}), pip cache {cache} ({size(cache)}), "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)

    cpu_before = children_cpu()
    polls_cpu = 0.0  # the polls' own, not make run's
    started = time.monotonic()
    steps: list[tuple[float, str]] = []
    ready = threading.Event()
    make = subprocess.Popen(["make", "run"], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)

    def read() -> None:
        for line in make.stdout:
            line = line.rstrip()
            elapsed = time.monotonic() - started
            if is_step(line) or READY_LINE in line:
                steps.append((elapsed, line))
                print(f"{elapsed:7.1f}s  {line[:140]}", flush=True)
            if READY_LINE in line:
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while not ready.wait(1.0):
            if make.poll() is not None or time.monotonic() - started > TIMEOUT_SECONDS:
                print("make run ended or timed out before serving", file=sys.stderr)
                return 1
        serving = time.monotonic() - started
        while not healthy(port):
            time.sleep(0.5)
        health = time.monotonic() - started
        while True:
            before = children_cpu()
            done = demo_ingested(clone)
            polls_cpu += children_cpu() - before
            if done:
                break
            time.sleep(1.0)
        demo = time.monotonic() - started
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGINT)
            try:
                make.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(make.pid, signal.SIGKILL)
        reader.join(timeout=5)
    venv = size(clone / ".venv")
    # The processes make waited for (not the daemonised Postgres and Redis), until it stopped.
    cpu = children_cpu() - cpu_before - polls_cpu
    print(f"\nserving after {serving:.1f}s, /healthz 200 after {health:.1f}s, demo corpus ingested after {demo:.1f}s; "
          f"CPU (user+system) of make run's processes {cpu:.0f}s; .venv {venv}, pip cache {size(cache)}; "
          f"load average now {os.getloadavg()[0]:.1f}")
    print("step durations (until the next step began):")
    marks = [*steps, (demo, "(demo corpus ingested)")]
    for (at, line), (after, _) in zip(marks, marks[1:], strict=False):
        print(f"  {after - at:7.1f}s  {line[:120]}")
    if not args.keep:  # the clone, and the pip cache when it was this run's own
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
