"""`make run`: embedded services, migrations, an admin account, the demo corpus, a Celery
worker and the web server; Ctrl-C stops all of them.

With DATABASE_URL / CELERY_BROKER_URL set, the embedded services are not started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def manage(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "manage.py", *args], cwd=ROOT, check=check)


def main() -> int:
    port = os.environ.get("PORT", "8000")
    embedded = not (os.environ.get("DATABASE_URL") or os.environ.get("CELERY_BROKER_URL"))
    if embedded:
        subprocess.run([PY, "scripts/services.py", "start"], cwd=ROOT, check=True)
    manage("migrate", "--noinput", "-v", "0")
    manage("ensure_admin")
    children: list[subprocess.Popen] = []
    try:
        children.append(subprocess.Popen(
            [PY, "-m", "celery", "-A", "ragweb", "worker", "--loglevel", "WARNING", "--concurrency", "1",
             "--hostname", "ragweb-run@%h"], cwd=ROOT))
        # Queued after the worker starts; ingestion is watched in the admin and the chat page.
        manage("ingest", "demo", "--collection", "demo", "--public", "--quiet", check=False)
        children.append(subprocess.Popen(
            [PY, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"], cwd=ROOT))
        print(f"\nragweb is running on http://127.0.0.1:{port}/  (Ctrl-C stops everything)\n", flush=True)
        while all(child.poll() is None for child in children):
            time.sleep(0.5)
        return 1  # a child died on its own
    except KeyboardInterrupt:
        return 0
    finally:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children:
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()
        if embedded:
            subprocess.run([PY, "scripts/services.py", "stop"], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
