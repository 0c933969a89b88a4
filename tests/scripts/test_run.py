"""`make run` (scripts/run.py): one process tree whose parent loads the model once and forks the web
server and the worker, which share it; survives its worker being killed, serves with gunicorn, and
stops everything on Ctrl-C. Runs its own copy (own data folder and ports) so the suite's servers are
untouched."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import psutil
import pytest

from lib.process_name import RUN, SOURCES_WORKER, WEB_SERVER, WORKER
from ragweb.celery import SCHEDULER_NAME

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def health(port: int) -> dict | None:
    """/healthz's JSON body with its HTTP status as "code", or None if nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as response:
            return {**json.loads(response.read()), "code": response.status}
    except urllib.error.HTTPError as error:
        return {**json.loads(error.read()), "code": error.code}
    except OSError:
        return None


def celery_main(run: psutil.Process) -> psutil.Process | None:
    for child in run.children():
        with contextlib.suppress(psutil.Error):
            if child.name() == WORKER:
                return child
    return None


@contextlib.contextmanager
def make_run(tmp_path, *, warm_up: str):
    # Under the project (not /tmp) so the unprivileged postgres user can traverse it like var/.
    var = ROOT / "var" / f"test-run-{os.getpid()}"
    ports = {"PORT": free_port(), "RAGWEB_PG_PORT": free_port(), "RAGWEB_REDIS_PORT": free_port()}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "DJANGO_"))}
    env.update({k: str(v) for k, v in ports.items()}, RAGWEB_VAR_DIR=str(var), RAGWEB_WARM_UP=warm_up)
    log = tmp_path / "run.log"
    process = subprocess.Popen([sys.executable, "scripts/run.py"], cwd=ROOT, env=env, stdout=log.open("w"),
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield process, ports, log, env
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        subprocess.run([sys.executable, "scripts/services.py", "stop", "--var", str(var)], cwd=ROOT, env=env,
                       capture_output=True)
        subprocess.run(["rm", "-rf", str(var)], check=False)


def load_run_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("ragweb_run", ROOT / "scripts" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["ragweb_run"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_child_exiting_on_its_own_right_after_start_is_given_up_after_five_tries():
    run = load_run_module()
    child = run.Child("worker", lambda: 3)  # forked: exits at once with status 3
    child.start()
    for _ in range(20):
        child.process.wait()
        child.check(time.monotonic())  # notices the exit and schedules the restart
        if child.given_up:
            break
        child.check(time.monotonic() + 60)  # the restart's time has come

    assert child.given_up and child.quick_failures == run.MAX_QUICK_FAILURES and child.restarts == 4
    assert child.process.returncode == 3


def test_a_child_killed_by_a_signal_is_always_started_again():
    run = load_run_module()
    child = run.Child("worker", lambda: time.sleep(60))
    child.start()
    try:
        for _ in range(7):  # more than MAX_QUICK_FAILURES kills, each right after a start
            child.kill_group()
            child.process.wait()
            child.check(time.monotonic())
            child.check(time.monotonic() + 60)
            assert child.alive()
    finally:
        child.stop()
    assert child.restarts == 7 and not child.given_up


@pytest.fixture(scope="module")
def services_folder():
    """A data folder and ports for the tests below, kept across them: the embedded Postgres's initdb is paid
    once, while each test still starts from stopped services (own_services)."""
    var = ROOT / "var" / f"test-run-lock-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "DJANGO_"))}
    env.update(PORT=str(free_port()), RAGWEB_PG_PORT=str(free_port()), RAGWEB_REDIS_PORT=str(free_port()),
               RAGWEB_VAR_DIR=str(var), RAGWEB_WARM_UP="0")
    try:
        yield var, env
    finally:
        subprocess.run(["rm", "-rf", str(var)], check=False)


@pytest.fixture
def own_services(services_folder):
    """The data folder and a way to run scripts/*.py against it; its services stopped after each test."""
    var, env = services_folder

    def script(*args: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *args], cwd=ROOT, env={**env, **extra}, capture_output=True,
                              text=True, timeout=300)

    try:
        yield var, script
    finally:
        script("scripts/services.py", "stop")


def test_a_second_run_in_the_same_folder_refuses_and_stops_nothing(own_services):
    var, script = own_services
    assert script("scripts/services.py", "start").returncode == 0
    first = load_run_module().acquire_lock(var)  # as the first run holds it
    assert first is not None
    try:
        second = script("scripts/run.py")
        assert second.returncode == 1
        assert f"another `make run` (pid {os.getpid()}) is using {var}" in second.stderr
        assert script("scripts/services.py", "status").returncode == 0  # the first run's services still up
    finally:
        first.close()
    assert load_run_module().acquire_lock(var) is not None  # released with its holder


def test_a_run_stops_only_the_services_it_started(own_services):
    var, script = own_services
    bad_key = {"SECRET_KEY": "short"}  # the run fails right after starting its services (migrate)
    failed = script("scripts/run.py", **bad_key)
    assert failed.returncode == 1 and "ragweb: configuration error" in failed.stderr
    assert script("scripts/services.py", "status").returncode == 1  # it started them, it stopped them

    assert script("scripts/services.py", "start").returncode == 0
    failed = script("scripts/run.py", **bad_key)
    assert failed.returncode == 1 and "leaving the embedded services running" in failed.stderr
    assert script("scripts/services.py", "status").returncode == 0  # started before it: left alone


def test_a_model_that_cannot_be_loaded_stops_the_run_with_a_message(own_services):
    var, script = own_services
    failed = script("scripts/run.py", RAGWEB_WARM_UP="1", EMBEDDING_MODEL=str(var / "no-such-model"))
    assert failed.returncode == 1
    assert "stopping: loading the app and its model failed: ImproperlyConfigured: EMBEDDING_MODEL must be" \
        in failed.stderr
    assert "Traceback" not in failed.stderr
    assert script("scripts/services.py", "status").returncode == 1  # it started them, it stopped them


def test_the_worker_runs_the_scheduler_with_its_schedule_file_under_var(monkeypatch, tmp_path):
    run = load_run_module()
    monkeypatch.setenv("RAGWEB_VAR_DIR", str(tmp_path))
    options = run.beat_options()
    assert options[0] == "--beat"
    assert options[options.index("--schedule") + 1] == str(tmp_path / "run" / "celerybeat-schedule")


PAGE = os.sysconf("SC_PAGE_SIZE")
PRESENT, FRAME = 1 << 63, (1 << 55) - 1  # /proc/PID/pagemap: bit 63 page present, bits 0-54 its frame


def anonymous_frames(pid: int) -> set[int]:
    """The physical frames holding process `pid`'s anonymous memory (heap and unnamed mappings: where
    Python objects and torch's tensors live). Two processes hold the same frame only when one forked
    the other's ancestor after writing it (copy-on-write), never by loading the same files."""
    frames: set[int] = set()
    mappings = Path(f"/proc/{pid}/maps").read_text().splitlines()
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for line in mappings:
            fields = line.split()
            if len(fields) > 5 and fields[5] != "[heap]":
                continue  # a file (libraries, the model's files), the stack, vdso
            start, end = (int(address, 16) for address in fields[0].split("-"))
            pagemap.seek(start // PAGE * 8)
            entries = np.frombuffer(pagemap.read((end - start) // PAGE * 8), dtype="<u8")
            present = entries[(entries & np.uint64(PRESENT)) != 0] & np.uint64(FRAME)
            frames.update(int(frame) for frame in present[present != 0])
    return frames


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """One `make run` (model loaded before the fork) for the two tests that need a whole app: starting one
    costs a Postgres initdb, the migrations and the demo corpus."""
    with make_run(tmp_path_factory.mktemp("run"), warm_up="1") as started:
        yield started


@pytest.mark.slow
def test_the_web_workers_and_the_pool_processes_share_the_parents_model(app):
    process, ports, log, env = app
    port = ports["PORT"]
    wait_for(lambda: (health(port) or {}).get("code") == 200, 300, f"a healthy app (log: {log})")
    run = psutil.Process(process.pid)
    # The parent loaded the embedding model (ONNX Runtime) and the reader before forking; torch never.
    maps = Path(f"/proc/{run.pid}/maps").read_text()
    assert "libonnxruntime" in maps and "libtorch_cpu" not in maps
    web = next(c for c in run.children() if c.name() == WEB_SERVER)
    worker = celery_main(run)
    web_workers = wait_for(lambda: len(web.children()) == 2 and web.children(), 60, "two web workers")
    pool = wait_for(lambda: [c for c in worker.children() if c.name() != SCHEDULER_NAME] or None, 60,
                    "the pool processes")
    # One copy: what the parent loaded sits in the same physical pages in a web worker and a pool
    # process (two trees that each loaded the model share none of these: ~0 MiB in common).
    parent, served, built = (anonymous_frames(p.pid) for p in (run, web_workers[0], pool[0]))
    shared_mib = len(parent & served & built) * PAGE / 2 ** 20
    assert shared_mib >= 150, f"{shared_mib:.0f} MiB shared"
    assert "forking with threads running" not in log.read_text()

    # Both embed after the fork (no thread of the parent missing): the pool builds the demo corpus, a web worker
    # embeds the question and finds it.
    token = subprocess.run([sys.executable, "manage.py", "drf_create_token", "admin"], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=True).stdout.split()[2]

    def search() -> list | None:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/search/", method="POST",
            data=json.dumps({"query": "How do I change the embedding model?", "collection": "demo"}).encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())["chunks"] or None

    # Searchable as soon as its first documents are in: the page that names the setting may come later.
    chunks = wait_for(lambda: (found := search()) and "EMBEDDING_MODEL" in " ".join(c["text"] for c in found)
                      and found, 240, "the demo corpus to be searchable, its page on the embedding model too")
    assert "EMBEDDING_MODEL" in " ".join(chunk["text"] for chunk in chunks)
    assert len(web.children()) == 2 and worker.is_running()


def test_the_web_server_defaults_to_two_processes_of_sixteen_threads_and_follows_the_settings(monkeypatch):
    # 16 threads a process: the searches waiting for a query-embedding pass are twice as many, and
    # a pass of more queries costs less CPU per query (docs/scaling.md, "Searches per second").
    run = load_run_module()
    monkeypatch.delenv("WEB_WORKERS", raising=False)
    monkeypatch.delenv("WEB_THREADS", raising=False)
    command = run.web_command("8123")
    assert command[command.index("--workers") + 1] == "2" and command[command.index("--threads") + 1] == "16"
    monkeypatch.setenv("WEB_WORKERS", "3")
    monkeypatch.setenv("WEB_THREADS", "6")
    command = run.web_command("8123")
    assert command[command.index("--workers") + 1] == "3" and command[command.index("--threads") + 1] == "6"


@pytest.mark.slow
def test_make_run_survives_its_worker_dying_and_ctrl_c_stops_everything(app):
    # Last in this file: it kills the worker and stops the app the test above shares.
    process, ports, log, _env = app
    port = ports["PORT"]
    wait_for(lambda: (health(port) or {}).get("code") == 200, 300, f"a healthy app (log: {log})")
    run = psutil.Process(process.pid)
    assert run.name() == RUN
    # Forked, not started: its three children run this script's code, named after their roles (the
    # source syncs' worker apart from ingestion's); no scheduler process of its own (the worker's runs it).
    assert sorted(c.name() for c in run.children()) == sorted([WEB_SERVER, WORKER, SOURCES_WORKER])
    syncs = next(c for c in run.children() if c.name() == SOURCES_WORKER)
    wait_for(lambda: len(syncs.children()) == 2, 60, "the sources worker's two pool processes (SYNC_CONCURRENCY)")
    assert all(c.cmdline() == run.cmdline() for c in run.children())
    assert f"Listening at: http://127.0.0.1:{port}" in log.read_text(), "served by gunicorn"
    worker = celery_main(run)
    wait_for(lambda: sorted(c.name() == SCHEDULER_NAME for c in worker.children()) == [False, False, True], 60,
             "the worker's three children: its two pool processes (WORKER_CONCURRENCY) and the scheduler")
    schedule = ROOT / "var" / f"test-run-{os.getpid()}" / "run"  # the app fixture's data folder
    assert wait_for(lambda: list(schedule.glob("celerybeat-schedule*")), 60, "the scheduler's schedule file")
    pool = worker.children(recursive=True)

    worker.send_signal(signal.SIGKILL)

    # The web server keeps answering, and the worker comes back: a new one, the old pool gone too.
    assert health(port) is not None
    replaced = wait_for(lambda: (w := celery_main(run)) and w.pid != worker.pid and w, 60, "a new worker")
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in pool)  # the scheduler too
    assert wait_for(lambda: SCHEDULER_NAME in [c.name() for c in replaced.children()], 120,
                    "the new worker's scheduler")
    assert wait_for(lambda: (h := health(port)) and h["code"] == 200 and h, 120,
                    "the new worker to answer")
    assert "the worker exited (killed by SIGKILL); starting it again" in log.read_text()

    descendants = run.children(recursive=True)
    os.kill(process.pid, signal.SIGINT)  # Ctrl-C
    assert process.wait(timeout=90) == 0
    assert replaced.pid in [d.pid for d in descendants]
    assert not [d for d in descendants if d.is_running() and d.status() != psutil.STATUS_ZOMBIE]
    for name in ("PORT", "RAGWEB_PG_PORT", "RAGWEB_REDIS_PORT"):
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", ports[name])) != 0, f"{name} still answers"
