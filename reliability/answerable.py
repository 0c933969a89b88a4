"""Asks per second with answerable questions: `make run`'s web server (scripts/run.py's gunicorn
command) on the current database, where the evaluation corpus is ingested (`make eval` or
`make eval-answers` ingest it), and N ask clients sending the evaluation set's questions.

    python -m reliability.answerable [--collection django-docs] [--questions ../shared/eval/django_dev.jsonl]
                                           [--clients 10] [--seconds 30] [--port 8208]

Uses the database and broker of the environment (RAGWEB_PG_PORT, ...), like manage.py. Prints one
line: answers/s, latency percentiles, the answers' statuses, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

from reliability.app import ROOT, App, Dropped


class Running(App):
    """The web server only, started with make run's command on this environment's services."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.process = None

    def web_processes(self):
        import psutil

        process = psutil.Process(self.process.pid)
        return [process, *process.children()]

    def postgres_processes(self):
        return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="django-docs")
    parser.add_argument("--questions", type=Path, default=ROOT.parent / "shared" / "eval" / "django_dev.jsonl")
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragweb.settings")
    import django

    django.setup()
    from corpus.models import Collection
    from reliability import load
    from scripts.run import web_command

    Collection.objects.filter(slug=args.collection).update(is_public=True)  # readable by the load's users
    pool = [json.loads(line)["question"] for line in args.questions.read_text().splitlines() if line.strip()]
    app = Running(args.port)
    env = {**os.environ, "RAGWEB_WARM_UP": "1", "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", "2"),
           "API_THROTTLE": "off", "LOG_LEVEL": "WARNING"}
    app.process = subprocess.Popen(web_command(str(args.port)), cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if app.request("GET", "/healthz", timeout=10).status in (200, 503):
                    break
            except Dropped:
                time.sleep(1)
        load.run(app, endpoint="ask", clients=args.clients, seconds=5, collection=args.collection, pool=pool)
        result = load.run(app, endpoint="ask", clients=args.clients, seconds=args.seconds,
                          collection=args.collection, pool=pool, name="ask (answerable)")
        print(result.line() + f"; load average {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        app.process.terminate()
        app.process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
