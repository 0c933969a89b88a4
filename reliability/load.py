"""Load: N concurrent clients (threads, each its own user and keep-alive connection, no pause between
requests) for a fixed time against POST /api/search/ or POST /api/ask/ (extractive), with /healthz
sampled throughout. Prints throughput, latency percentiles, errors and dropped connections, and the
server's CPU seconds per request (gunicorn + Postgres processes) beside the CPU cost of embedding
one query alone, the floor no search can go under (so the figure holds on a noisy machine)."""

from __future__ import annotations

import http.client
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from reliability.app import App, Dropped
from reliability.faults import WORDS
from reliability.security import create_user

QUESTIONS = [
    "How often should {a} be watered?", "What helps {a} against {b}?", "When is the best time to plant {a}?",
    "Which {a} need {b}?", "Why does {a} attract {b}?", "How much {a} does a plot need?",
    "What did the notes say about {a} and {b}?", "Is {a} good for {b}?",
]


def questions(n: int, seed: int = 5) -> list[str]:
    """n distinct questions about the harness's documents (no cache can answer them all)."""
    rng = random.Random(seed)
    found: set[str] = set()
    while len(found) < n:
        a, b = rng.sample(WORDS, 2)
        plot = "" if rng.random() < 0.5 else f" (plot {rng.randint(1, 99)})"
        found.add(rng.choice(QUESTIONS).format(a=a, b=b) + plot)
    return sorted(found)


@dataclass
class LoadResult:
    name: str
    clients: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    dropped: int = 0
    health: Counter = field(default_factory=Counter)
    health_max_seconds: float = 0.0
    server_cpu_seconds: float = 0.0
    examples: list[str] = field(default_factory=list)

    @property
    def completed(self) -> int:
        return len(self.latencies)

    @property
    def throughput(self) -> float:
        return self.completed / self.seconds if self.seconds else 0.0

    def percentile(self, p: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]

    @property
    def errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 400)

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)

    @property
    def cpu_per_request(self) -> float:
        return self.server_cpu_seconds / self.completed if self.completed else float("nan")

    def line(self) -> str:
        return (f"{self.name}: {self.clients} clients x {self.seconds:.0f} s: {self.completed} requests, "
                f"{self.throughput:.1f}/s, p50 {self.percentile(50) * 1000:.0f} ms, p95 "
                f"{self.percentile(95) * 1000:.0f} ms, p99 {self.percentile(99) * 1000:.0f} ms, errors {self.errors} "
                f"({dict(self.statuses)}), dropped {self.dropped}, server CPU {self.cpu_per_request * 1000:.1f} ms "
                f"per request; /healthz {dict(self.health)} (slowest {self.health_max_seconds:.1f} s)")


def _cpu_by_pid(processes) -> dict[int, float]:
    seconds = {}
    for process in processes:
        try:
            times = process.cpu_times()
            seconds[process.pid] = times.user + times.system
        except Exception:  # noqa: BLE001 - a process that went away counts no more
            continue
    return seconds


def _server_processes(app: App):
    return app.web_processes() + app.postgres_processes()


def run(app: App, *, endpoint: str, clients: int, seconds: float, collection: str | None = None,
        name: str | None = None, pool: list[str] | None = None) -> LoadResult:
    """`clients` closed-loop clients on `endpoint` ("search" or "ask") for `seconds`, each sending
    questions drawn from `pool` (default: 400 random ones about the harness's documents)."""
    tokens = [create_user(f"load-{endpoint}-{i}-{int(time.time() * 1000)}")[1] for i in range(clients)]
    pool = pool or questions(400)
    result = LoadResult(name or f"{endpoint}", clients, seconds)
    lock = threading.Lock()
    start_gate = threading.Barrier(clients + 1)
    stop = threading.Event()

    def client(index: int) -> None:
        rng = random.Random(index)
        conn = http.client.HTTPConnection("127.0.0.1", app.port, timeout=120)
        start_gate.wait()
        while not stop.is_set():
            question = rng.choice(pool)
            body = {"query": question} if endpoint == "search" else {"question": question}
            if collection:
                body["collection"] = collection
            try:
                response = app.request("POST", f"/api/{endpoint}/", json_body=body, token=tokens[index],
                                       connection=conn)
            except Dropped as exc:
                with lock:
                    result.dropped += 1
                    if len(result.examples) < 5:
                        result.examples.append(str(exc))
                conn = http.client.HTTPConnection("127.0.0.1", app.port, timeout=120)
                continue
            if stop.is_set():
                break  # finished after the window: not counted
            with lock:
                result.latencies.append(response.seconds)
                result.statuses[response.status] += 1
                if response.status >= 400 and len(result.examples) < 5:
                    result.examples.append(f"HTTP {response.status}: {response.body[:200]!r}")
            if response.headers.get("connection", "").lower() == "close":
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", app.port, timeout=120)
        conn.close()

    def health() -> None:
        while not stop.wait(2.0):
            started = time.perf_counter()
            sample = app.health()
            elapsed = time.perf_counter() - started
            with lock:
                result.health["dropped" if sample is None else sample["code"]] += 1
                result.health_max_seconds = max(result.health_max_seconds, elapsed)

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    threads.append(threading.Thread(target=health, daemon=True))
    for thread in threads:
        thread.start()
    cpu_before = _cpu_by_pid(_server_processes(app))
    start_gate.wait()
    started = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    result.seconds = time.perf_counter() - started
    # Processes started meanwhile (a database backend for a new connection) count from zero.
    cpu_after = _cpu_by_pid(_server_processes(app))
    result.server_cpu_seconds = sum(t - cpu_before.get(pid, 0.0) for pid, t in cpu_after.items())
    for thread in threads:
        thread.join(timeout=180)
    return result


def query_embedding_cpu(n: int = 200) -> float:
    """CPU seconds to embed one search query on its own (one torch thread, as the web process does)."""
    from chat.retrieval.query_batching import embed_queries

    pool = questions(n, seed=11)
    embed_queries(["warm up"])
    started = time.process_time()
    for question in pool:
        embed_queries([question])
    return (time.process_time() - started) / len(pool)


class Runserver:
    """Django's development server on the app's database, as `make run` served before gunicorn: the
    same load against it, in the same run, gives today's figures beside the new ones."""

    def __init__(self, app: App) -> None:
        import copy

        self.app = app
        self.server = copy.copy(app)  # the same helpers, another port and web process
        self.process = None

    def __enter__(self) -> App:
        import subprocess

        from reliability.app import PY, ROOT, free_port

        self.server.port = free_port()
        env = self.app.env()
        self.process = subprocess.Popen([PY, "manage.py", "runserver", f"127.0.0.1:{self.server.port}", "--noreload"],
                                        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import psutil

        process = psutil.Process(self.process.pid)
        self.server.web_processes = lambda: [process]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if self.server.request("GET", "/healthz", timeout=10).status in (200, 503):
                    break
            except Dropped:
                time.sleep(1)
        return self.server

    def __exit__(self, *exc_info) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except Exception:  # noqa: BLE001
            self.process.kill()
