"""Faults an operator meets: the worker killed at random moments, Redis and Postgres restarted under
load, the LLM failing, hanging or cutting its stream. Each run ends with the collection's invariants
checked (reliability.checks) and the web's answers meanwhile sorted into good, clear errors
(JSON with a message: 503 while the database is down, 502 when the LLM fails) and bad ones (a 500,
an HTML error page, a dropped connection)."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from reliability.app import App, Dropped
from reliability.checks import Outcome, check_collection, reconnect, wait_finished
from tests.corpus.ingest_helpers import long_markdown

WORDS = ["tomato", "compost", "aphid", "watering", "pruning", "mulch", "seedling", "harvest", "soil", "frost",
         "pepper", "beetle", "ladybird", "trellis", "greenhouse", "rain", "sunlight", "nitrogen", "worm", "basil"]


@dataclass
class FaultResult:
    name: str
    outcome: Outcome | None
    web: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and (self.outcome is None or self.outcome.ok) and not self.web["bad"] \
            and not self.web["dropped"]


def write_documents(folder: Path, count: int, *, seed: int = 0) -> list[str]:
    """`count` Markdown files of 8 to 30 sections (about 6 to 25 chunks each); their sources."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    sources = []
    for i in range(count):
        data = long_markdown(rng.randint(8, 30)).replace(b"Field notes", f"Notes {i} on {WORDS[i % 20]}".encode())
        name = f"doc-{i:03d}.md"
        (folder / name).write_bytes(data)
        sources.append(name)
    return sources


class WebProbe(threading.Thread):
    """Asks the web app something every `interval` seconds (a search, the document list, /healthz)
    and sorts the answers: ok, clear (an error status with a JSON message, not 500), bad, dropped."""

    def __init__(self, app: App, token: str, *, interval: float = 0.5, threads: int = 1) -> None:
        super().__init__(daemon=True)
        self.app, self.token, self.interval, self.threads = app, token, interval, threads
        self.counts: Counter = Counter()
        self.examples: list[str] = []
        self._halt = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        workers = [threading.Thread(target=self._loop, args=(i,), daemon=True) for i in range(self.threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    def _loop(self, seed: int) -> None:
        rng = random.Random(seed)
        requests = [
            lambda: self.app.request("POST", "/api/search/", json_body={"query": " ".join(rng.sample(WORDS, 2))},
                                     token=self.token, timeout=60),
            lambda: self.app.request("GET", "/api/documents/?limit=5", token=self.token, timeout=60),
            lambda: self.app.request("GET", "/healthz", timeout=60),
        ]
        i = 0
        while not self._halt.is_set():
            request = requests[i % len(requests)]
            i += 1
            try:
                response = request()
            except Dropped as exc:
                self._count("dropped", str(exc))
            else:
                if response.status < 400:
                    self._count("ok")
                elif response.status != 500 and response.is_json and _has_message(response):
                    self._count("clear")
                    self._count(f"HTTP {response.status}")
                else:
                    self._count("bad", f"HTTP {response.status}: {response.body[:200]!r}")
            self._halt.wait(self.interval)

    def _count(self, key: str, example: str | None = None) -> None:
        with self._lock:
            self.counts[key] += 1
            if example and len(self.examples) < 10:
                self.examples.append(example)

    def stop(self) -> Counter:
        self._halt.set()
        self.join(timeout=120)
        return self.counts


def _has_message(response) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    if isinstance(body, dict) and ("detail" in body or "error" in body or "status" in body):
        return True
    return bool(body)


def _ingest(app: App, folder: Path, collection: str) -> None:
    app.manage("ingest", str(folder), "--collection", collection, "--quiet")


def _in_progress(collection: str) -> int:
    from corpus.models import IN_PROGRESS, Document

    try:
        return Document.objects.filter(collection__slug=collection, status__in=IN_PROGRESS).count()
    except Exception:
        reconnect()
        return 0


def worker_kills(app: App, token: str, workdir: Path, *, files: int = 60, kills: int = 10,
                 timeout: float = 1800) -> FaultResult:
    """kill -9 of the worker (its whole process group) at random moments of an ingestion."""
    collection = "fault-kills"
    sources = write_documents(workdir / collection, files, seed=1)
    result = FaultResult(f"kill -9 of the worker x{kills} during a {files}-file ingestion", None)
    probe = WebProbe(app, token)
    probe.start()
    rng = random.Random(42)
    started = time.monotonic()
    _ingest(app, workdir / collection, collection)
    done = 0
    while done < kills and time.monotonic() - started < timeout:
        worker = app.wait_for_worker(timeout=180)
        # A random moment while it works: after 1 to 8 seconds of a document being in progress.
        deadline = time.monotonic() + 120
        while not _in_progress(collection) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(rng.uniform(1.0, 8.0))
        if wait_finished(collection, count=files, timeout=0.1):
            result.notes.append(f"the ingestion finished after {done} kills")
            break
        app.kill_worker()
        done += 1
        app.wait_for_worker(other_than=worker.pid, timeout=180)
    result.notes.append(f"{done} kills")
    if done < kills:
        result.problems.append(f"only {done} of {kills} kills happened before the ingestion ended")
    if not wait_finished(collection, count=files, timeout=timeout):
        result.problems.append("the ingestion did not finish")
    result.web = probe.stop()
    result.notes.extend(probe.examples)
    result.outcome = check_collection(collection, sources)
    result.notes.append(f"{time.monotonic() - started:.0f} s")
    return result


def redis_restart(app: App, token: str, workdir: Path, *, files: int = 20, down: float = 5.0,
                  timeout: float = 900) -> FaultResult:
    """Redis (the broker) stopped for a few seconds mid-ingestion, an upload tried meanwhile."""
    from reliability.hostile import multipart

    collection = "fault-redis"
    sources = write_documents(workdir / collection, files, seed=2)
    result = FaultResult(f"Redis restarted ({down:.0f} s down) during a {files}-file ingestion", None)
    probe = WebProbe(app, token)
    probe.start()
    started = time.monotonic()
    _ingest(app, workdir / collection, collection)
    _wait_until(lambda: _in_progress(collection), 120)
    time.sleep(2)
    thread = threading.Thread(target=app.restart_redis, args=(down,))
    thread.start()
    time.sleep(down / 2)
    body, content_type = multipart({"collection": collection}, "file", "during-outage.md",
                                   b"# Uploaded while Redis was down\n\nIt must not be lost.\n")
    try:
        upload = app.request("POST", "/api/documents/", body=body, headers={"Content-Type": content_type},
                             token=token)
        result.notes.append(f"upload while Redis was down: HTTP {upload.status} {upload.body[:160]!r}")
        if upload.status == 201:
            sources.append("during-outage.md")
        elif upload.status == 500 or not upload.is_json:
            result.problems.append(f"upload while Redis was down: HTTP {upload.status}")
        else:
            _retry_upload(app, token, body, content_type, sources, result)
    except Dropped as exc:
        result.problems.append(f"upload while Redis was down: {exc}")
    thread.join()
    if not wait_finished(collection, count=len(sources), timeout=timeout):
        result.problems.append("the ingestion did not finish")
    result.web = probe.stop()
    result.notes.extend(probe.examples)
    result.outcome = check_collection(collection, sources)
    result.notes.append(f"{time.monotonic() - started:.0f} s")
    return result


def _retry_upload(app: App, token: str, body: bytes, content_type: str, sources: list[str],
                  result: FaultResult) -> None:
    """A client told to try again (503) does; the document must then go through."""
    time.sleep(10)
    again = app.request("POST", "/api/documents/", body=body, headers={"Content-Type": content_type}, token=token)
    result.notes.append(f"the same upload retried after the outage: HTTP {again.status}")
    if again.status == 201:
        sources.append("during-outage.md")
    else:
        result.problems.append(f"the retried upload: HTTP {again.status}")


def postgres_restart(app: App, token: str, workdir: Path, *, files: int = 20, down: float = 5.0,
                     timeout: float = 900) -> FaultResult:
    """Postgres stopped for a few seconds mid-ingestion, with searches running (4 clients)."""
    collection = "fault-postgres"
    sources = write_documents(workdir / collection, files, seed=3)
    result = FaultResult(f"Postgres restarted ({down:.0f} s down) during a {files}-file ingestion and searches",
                         None)
    probe = WebProbe(app, token, interval=0.1, threads=4)
    probe.start()
    started = time.monotonic()
    _ingest(app, workdir / collection, collection)
    _wait_until(lambda: _in_progress(collection), 120)
    time.sleep(3)
    app.restart_postgres(down)
    reconnect()
    recovered = _wait_until(lambda: _search_ok(app, token), 120)
    result.notes.append(f"searches answered again {recovered:.1f} s after Postgres was back" if recovered is not None
                        else "searches did not recover within 120 s")
    if recovered is None:
        result.problems.append("searches did not recover")
    if not wait_finished(collection, count=files, timeout=timeout):
        result.problems.append("the ingestion did not finish")
    result.web = probe.stop()
    result.notes.extend(probe.examples)
    result.outcome = check_collection(collection, sources)
    result.notes.append(f"{time.monotonic() - started:.0f} s")
    return result


def _search_ok(app: App, token: str) -> bool:
    try:
        return app.request("POST", "/api/search/", json_body={"query": "compost"}, token=token).status == 200
    except Dropped:
        return False


def _wait_until(predicate, timeout: float) -> float | None:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.2)
    return None


# --- the LLM ---

def llm_faults(app: App, token: str, fake, *, llm_timeout: float) -> list[FaultResult]:
    """The LLM endpoint answering 500, hanging past LLM_TIMEOUT, and cutting its stream midway: the
    API answers with a clear error (JSON or an SSE error event) in bounded time, never a 500."""
    from reliability.hostile import upload

    results = []
    app.request("POST", "/api/collections/", json_body={"name": "LLM", "slug": "llm"}, token=token)
    _, document, _ = upload(app, token, "llm", "watering.md", b"# Watering\n\nTomatoes need water twice a week, "
                            b"deeply, so that their roots grow down. Peppers need less.\n")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and app.request(
            "GET", f"/api/documents/{document}/", token=token).json()["status"] not in ("ready", "failed"):
        time.sleep(0.5)
    question = {"question": "How often do tomatoes need water?", "collection": "llm"}

    fake.status, fake.hang, fake.drop_after = 500, 0.0, None
    results.append(_ask_case(app, token, "the LLM answering HTTP 500", question, max_seconds=60))
    fake.status, fake.hang = None, llm_timeout * 4
    results.append(_ask_case(app, token, f"the LLM hanging ({llm_timeout * 4:.0f} s, timeout {llm_timeout:.0f} s)",
                             question, max_seconds=llm_timeout * 3 + 30))
    fake.hang, fake.drop_after = 0.0, 3
    results.append(_ask_case(app, token, "the LLM cutting its stream after 3 pieces", {**question, "stream": True},
                             max_seconds=60, stream=True))
    results.append(_openai_stream_case(app, token, "/v1 stream cut by the LLM after 3 pieces", max_seconds=60))
    fake.drop_after = None
    results.append(_ask_case(app, token, "the LLM healthy again", question, max_seconds=60, expect_ok=True))
    return results


def _ask_case(app: App, token: str, name: str, body: dict, *, max_seconds: float, stream: bool = False,
              expect_ok: bool = False) -> FaultResult:
    result = FaultResult(name, None)
    headers = {"Accept": "text/event-stream"} if stream else {}
    try:
        response = app.request("POST", "/api/ask/", json_body=body, token=token, headers=headers,
                               timeout=max_seconds + 30)
    except Dropped as exc:
        result.web["dropped"] += 1
        result.problems.append(str(exc))
        return result
    result.notes.append(f"HTTP {response.status} in {response.seconds:.1f} s")
    if response.seconds > max_seconds:
        result.problems.append(f"took {response.seconds:.0f} s")
    if stream:
        events = [line[7:] for line in response.body.decode(errors="replace").splitlines() if
                  line.startswith("event: ")]
        result.notes.append(f"events: {', '.join(dict.fromkeys(events))}")
        final = _last_data(response.body)
        error = final.get("error") or final.get("detail") if isinstance(final, dict) else None
        if response.status != 200 or not events or events[-1] not in ("done", "error") or not error:
            result.problems.append("the stream did not end with an error event or a done event carrying the error")
        result.web["clear" if not result.problems else "bad"] += 1
        return result
    if response.status == 500 or not response.is_json:
        result.web["bad"] += 1
        result.problems.append(f"HTTP {response.status}, {response.headers.get('content-type')}")
        return result
    payload = response.json()
    result.notes.append(f"mode {payload.get('mode')!r}, error: {payload.get('error', '')[:120]!r}")
    if expect_ok:
        if response.status != 200 or payload.get("error") or payload.get("mode") != "llm":
            result.problems.append("no LLM answer once the LLM was back")
        result.web["ok"] += 1
    else:
        result.web["clear"] += 1
        if not payload.get("error") or "answers this question" in payload.get("error", ""):
            result.problems.append("no error message about the LLM")
    return result


def _openai_stream_case(app: App, token: str, name: str, *, max_seconds: float) -> FaultResult:
    result = FaultResult(name, None)
    body = {"model": "ragweb", "stream": True,
            "messages": [{"role": "user", "content": "How often do tomatoes need water?"}]}
    try:
        response = app.request("POST", "/v1/chat/completions", json_body=body, token=token, timeout=max_seconds + 30)
    except Dropped as exc:
        result.web["dropped"] += 1
        result.problems.append(str(exc))
        return result
    text = response.body.decode(errors="replace")
    result.notes.append(f"HTTP {response.status} in {response.seconds:.1f} s; ends {text.strip()[-120:]!r}")
    if response.status == 500:
        result.problems.append("HTTP 500")
    elif response.status == 200 and '"error"' not in text:
        result.problems.append("the cut stream carried no error")
    result.web["clear" if not result.problems else "bad"] += 1
    return result


def _last_data(body: bytes):
    data = [line[6:] for line in body.decode(errors="replace").splitlines() if line.startswith("data: ")]
    for item in reversed(data):
        try:
            return json.loads(item)
        except ValueError:
            continue
    return None
