"""`make run`: embedded services, migrations, an admin account, the demo corpus, a Celery worker
running the scheduler too (Celery beat: sources' scheduled syncs; beat_options) and the web server
(gunicorn); Ctrl-C stops all of them.

One process tree (docs/scaling.md, "Memory"): this process sets up Django, imports the URLconf and
loads the embedding model once (ragweb.wsgi, corpus.ingest.embed.load_before_fork: no forward pass,
gc.freeze()), then forks, without exec, the web server (gunicorn's own runner with web_args) and the
Celery worker (worker_args + beat_options) as its children: their workers, pool processes and
scheduler all share its copy of torch and the model. Before each fork it holds no database
connection and runs no other thread (a lock or a socket held at fork time would be copied half-used).
Each child names itself (lib.process_name: ragweb-web, ragweb-worker; this process ragweb-run) so
`ps` tells them apart: their command lines are all this script's. Two workers: ingestion (and the
rest) on the "celery" queue, source syncs on "sources" (ragweb-sources), so a slow crawl never holds
an ingestion slot.

The worker (with its scheduler) and the web server are supervised: one that dies (a crash, the OOM killer, `kill -9`)
is forked again from this process (the model is already loaded, so it is back in seconds), its leftover
processes (a worker's pool children) killed first, so `make run` keeps serving. A child that keeps
exiting on its own right after it starts (a bad setting, say) is given up on after a few tries
(/healthz then reports the worker down) rather than restarted forever; one killed by a signal is
always started again. A restarted worker puts back in the queue at once the documents its predecessor
left in progress (corpus.tasks). Migrations, the admin account and the demo corpus's ingestion run as
`manage.py` subprocesses.

gunicorn (lib.gunicorn_worker, gthread that reads each request whole before a thread takes it, so
clients that send slowly hold no thread: WEB_WORKERS processes x WEB_THREADS threads, default 2 x 16, as
docker-compose) serves many clients at once, each thread keeping its database connection (settings.DB_CONN_MAX_AGE).
docker-compose keeps separate containers (web, worker, beat): there each holds its own copy.
With DATABASE_URL / REDIS_URL set, the embedded services are not started.

One run per data folder (var/, or RAGWEB_VAR_DIR): a second `make run` there finds the lock
(var/run/make-run.lock, released by the kernel when the first one exits however it exits) and
refuses to start, touching nothing. A run stops only what it started: embedded services that were
already running (`make services-start`, a test run) are left running.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
if str(ROOT) not in sys.path:  # run as `python scripts/run.py`: the project's packages
    sys.path.insert(0, str(ROOT))

from lib import forking  # noqa: E402

# A child that dies within this many seconds of starting counts as a quick failure; after
# MAX_QUICK_FAILURES of them in a row it is not started again.
QUICK_FAILURE_SECONDS = 30.0
MAX_QUICK_FAILURES = 5
STOP_SECONDS = 20.0
POLL_SECONDS = 0.5


def manage(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "manage.py", *args], cwd=ROOT, check=check)


def log(message: str) -> None:
    print(f"[make run] {message}", file=sys.stderr, flush=True)


@dataclass
class Child:
    """A supervised child: `target` run in a process forked from this one (lib.forking), in its
    own process group (so its own children go with it)."""

    name: str
    target: Callable[[], int | None]
    close: tuple[int, ...] = ()
    process: forking.Forked | None = None
    started_at: float = 0.0
    quick_failures: int = 0
    restart_at: float | None = None
    given_up: bool = False
    restarts: int = field(default=0)

    def start(self) -> None:
        self.process = forking.fork(self.target, close=self.close)
        self.started_at = time.monotonic()
        self.restart_at = None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill_group(self, sig: int = signal.SIGKILL) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            if self.process.poll() is None:  # forked but not yet in a session of its own
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.process.pid, sig)
        except PermissionError:
            pass

    def stop(self) -> None:
        """SIGTERM to the group (a warm shutdown), then SIGKILL whatever is left."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.kill_group(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                log(f"{self.name} did not stop within {STOP_SECONDS:.0f}s; killing it")
        self.kill_group(signal.SIGKILL)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def check(self, now: float) -> None:
        """Notice a death and schedule the restart; restart when its time has come."""
        if self.given_up:
            return
        if self.restart_at is not None:
            if now >= self.restart_at:
                self.restarts += 1
                log(f"starting the {self.name} again (restart {self.restarts})")
                self.start()
            return
        if self.alive():
            return
        code = self.process.returncode if self.process is not None else None
        self.kill_group()  # what it leaves behind, e.g. a worker's pool process mid-task
        killed = code is not None and code < 0  # by a signal from outside (kill -9, the OOM killer): not its fault
        if now - self.started_at < QUICK_FAILURE_SECONDS and not killed:
            self.quick_failures += 1
        else:
            self.quick_failures = 0
        if self.quick_failures >= MAX_QUICK_FAILURES:
            self.given_up = True
            log(f"the {self.name} exited ({code}) {self.quick_failures} times right after starting; not starting "
                "it again (see its output above)")
            return
        delay = min(2.0 ** self.quick_failures, 30.0) if self.quick_failures else 1.0
        log(f"the {self.name} exited ({describe(code)}); starting it again in {delay:.0f}s")
        self.restart_at = now + delay


def describe(code: int | None) -> str:
    if code is None:
        return "unknown status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


# gthread, with each request read whole before a thread takes it: slow clients hold no thread.
WEB_WORKER_CLASS = "lib.gunicorn_worker.BufferingThreadWorker"


# The queues (settings.CELERY_TASK_QUEUES): ingestion and the rest on "celery", source syncs on "sources".
INGESTION_QUEUE = "celery"
SYNC_QUEUE = "sources"
# Syncs at once: they mostly wait on remote servers and their Crawl-delay, not on the CPU.
SYNC_CONCURRENCY = 2


def worker_args() -> list[str]:
    """The `celery` arguments of make run's worker (the app given apart: `-A ragweb`, or the app itself):
    the ingestion queue only, so a crawl never takes one of its WORKER_CONCURRENCY slots."""
    return ["worker", "--loglevel", "WARNING", "--hostname", "ragweb-run@%h", "--queues", INGESTION_QUEUE]


def worker_command() -> list[str]:
    return [PY, "-m", "celery", "-A", "ragweb", *worker_args()]


def sources_worker_args() -> list[str]:
    """The `celery` arguments of make run's second worker: source syncs only, SYNC_CONCURRENCY at once."""
    return ["worker", "--loglevel", "WARNING", "--hostname", "ragweb-sources@%h", "--queues", SYNC_QUEUE,
            "--concurrency", str(SYNC_CONCURRENCY)]


def beat_options() -> list[str]:
    """The worker's options that run the scheduler (Celery beat: queues the sources whose scheduled
    sync is due) inside it, its schedule file under var/run/.

    Celery forks the scheduler from the worker's main process, so it shares the model's pages rather
    than holding ~140 MiB of its own as a separate `celery beat` did (docs/scaling.md, "Memory"); it
    goes and comes back with the worker. There must be one beat only: right for make run's single
    worker; docker-compose, whose workers scale, keeps a `beat` service of its own."""
    return ["--beat", "--schedule", str(var_dir() / "run" / "celerybeat-schedule")]


def web_args(port: str) -> list[str]:
    """gunicorn's arguments for make run's web server (after `gunicorn` on a command line)."""
    return ["ragweb.wsgi:application", "--bind", f"127.0.0.1:{port}",
            "--worker-class", WEB_WORKER_CLASS, "--workers", os.environ.get("WEB_WORKERS", "2"),
            "--threads", os.environ.get("WEB_THREADS", "16"), "--timeout", "120", "--graceful-timeout", "10",
            "--backlog", "2048", "--no-control-socket",
            # The master imports the app and loads the model before it forks the workers (make run's
            # forked web server finds both already done by its parent).
            "--preload"]


def web_command(port: str) -> list[str]:
    """The same web server as a command of its own (the harnesses that start gunicorn alone)."""
    return [PY, "-m", "gunicorn", *web_args(port)]


def load_the_app() -> None:
    """Set up Django in this process, import the URLconf and load the embedding model (ragweb.wsgi:
    RAGWEB_WARM_UP, prefer_idle_threads, load_before_fork), so that the children forked next share
    them. No forward pass and no thread: see lib.forking.ready_to_fork."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragweb.settings")
    import ragweb.wsgi  # noqa: F401 (what it does on import is the point)
    from lib.memory import limit_malloc_arenas
    from lib.process_name import RUN, set_process_name

    set_process_name(RUN)

    # MALLOC_ARENA_MAX is read when a process starts: this one started before it was set, and its
    # children inherit its allocator rather than read it again.
    limit_malloc_arenas(int(os.environ["MALLOC_ARENA_MAX"]))


def start_model_export():
    """On a first start, begin exporting the embedding model's ONNX graph in a child process (a
    subprocess.Popen; None when there is nothing to export): it overlaps the services' start and the
    migrations instead of delaying the model's load after them (docs/first-start.md). Sets up Django's
    settings in this process first, so that the secret files under var/ are made here, once, before the
    manage.py subprocesses read them. No database connection, no thread: nothing that a fork minds.
    A failure here (a bad setting) is left to the steps after it, which stop the run with its message."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragweb.settings")
    try:
        import django

        django.setup()
        from corpus.ingest import embed

        export = embed.start_graph_export()
    except Exception:  # noqa: BLE001 - a bad setting: the steps after this one report it in their own words
        return None
    if export is not None:
        log("exporting the embedding model to ONNX (first start only), while the database gets ready")
    return export


def serve_web(port: str) -> int:
    """The web server, run by a child forked from make run's process: gunicorn's own runner with
    web_args, as `gunicorn` would run them (its config file and GUNICORN_CMD_ARGS too). The app module
    is already imported, so its master loads nothing again and its workers share the parent's model."""
    from gunicorn.app.wsgiapp import WSGIApplication

    from lib.process_name import WEB_SERVER, set_process_name

    set_process_name(WEB_SERVER)
    sys.argv = ["gunicorn", *web_args(port)]  # gunicorn reads its options from there
    WSGIApplication("%(prog)s [OPTIONS] [APP_MODULE]", prog="gunicorn").run()
    return 0


def run_worker() -> int:
    """The Celery worker and its scheduler, run by a child forked from make run's process: the
    `celery worker` command with worker_args + beat_options. Its worker_init hooks (ragweb.celery)
    run here as in a worker of its own."""
    from lib.process_name import WORKER, set_process_name
    from ragweb.celery import app

    set_process_name(WORKER)
    return app.start(argv=[*worker_args(), *beat_options()]) or 0


def run_sources_worker() -> int:
    """The source syncs' Celery worker (sources_worker_args), run by a child forked from make run's
    process like run_worker."""
    from lib.process_name import SOURCES_WORKER, set_process_name
    from ragweb.celery import app

    set_process_name(SOURCES_WORKER)
    return app.start(argv=sources_worker_args()) or 0


def var_dir() -> Path:
    return Path(os.environ.get("RAGWEB_VAR_DIR", ROOT / "var"))


def acquire_lock(var: Path):
    """The run lock of the data folder `var` (an open file: keep it for the run), or None when another
    run holds it. flock, so a killed run never leaves a stale lock."""
    path = var / "run" / "make-run.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def _holder(var: Path) -> str:
    try:
        return (var / "run" / "make-run.lock").read_text().strip() or "?"
    except OSError:
        return "?"


def services_running() -> bool:
    return subprocess.run([PY, "scripts/services.py", "status"], cwd=ROOT, stdout=subprocess.DEVNULL).returncode == 0


def _stop_on_sigterm(signum, frame) -> None:
    raise KeyboardInterrupt


def main() -> int:
    port = os.environ.get("PORT", "8000")
    embedded = not (os.environ.get("DATABASE_URL") or os.environ.get("REDIS_URL"))
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    # Ctrl-C: also when started from a shell that ignores SIGINT for background jobs.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # glibc gives each thread that allocates its own malloc arena (up to 8 per core); the web workers'
    # threads then each keep the peak of the largest request they served. Two arenas bound that.
    os.environ.setdefault("MALLOC_ARENA_MAX", "2")
    lock = acquire_lock(var_dir())
    if lock is None:
        log(f"another `make run` (pid {_holder(var_dir())}) is using {var_dir()}; not starting a second one "
            "(stop it first, or give this one its own RAGWEB_VAR_DIR, PORT, RAGWEB_PG_PORT and RAGWEB_REDIS_PORT)")
        return 1
    children: list[Child] = []
    started_services = False
    export = None
    try:
        export = start_model_export()
        if embedded and not services_running():
            started_services = True
            log("starting the embedded Postgres and Redis")
            subprocess.run([PY, "scripts/services.py", "start"], cwd=ROOT, check=True)
        log("migrating the database")
        manage("migrate", "--noinput", "-v", "0")
        manage("ensure_admin")
        if export is not None:
            log("waiting for the embedding model's export")
            export.wait()  # a failed one is tried again, in the foreground, by loading the model
        try:
            log("loading the app and the embedding model")
            load_the_app()
        except Exception as error:  # noqa: BLE001 - ImproperlyConfigured (EMBEDDING_MODEL), a broken install
            log(f"stopping: loading the app and its model failed: {type(error).__name__}: {error}")
            return 1
        keep = (lock.fileno(),)  # the run lock is this process's: a child that outlives it must not hold it
        worker = Child("worker", run_worker, keep)
        syncs = Child("sources worker", run_sources_worker, keep)
        web = Child("web server", lambda: serve_web(port), keep)
        children = [worker, syncs, web]
        worker.start()
        syncs.start()
        # Queued after the worker starts; ingestion is watched in the admin and the chat page.
        log("queuing the demo corpus")
        manage("ingest", "demo/docs", "--collection", "demo", "--public", "--quiet", check=False)
        web.start()
        print(f"\nragweb is running on http://127.0.0.1:{port}/  (Ctrl-C stops everything)\n", flush=True)
        while not web.given_up:
            time.sleep(POLL_SECONDS)
            now = time.monotonic()
            for child in children:
                child.check(now)
        return 1  # nothing left to serve
    except KeyboardInterrupt:
        return 0
    except subprocess.CalledProcessError as failed:
        # manage.py printed why (one line: a bad setting, an unreachable database).
        log(f"stopping: `{' '.join(failed.cmd[1:])}` failed (exit status {failed.returncode}); see the message above")
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        if export is not None and export.poll() is None:  # stopped during the first start's export
            export.kill()
            export.wait()
        for child in reversed(children):  # the web server first, then the worker
            child.stop()
        if started_services:
            subprocess.run([PY, "scripts/services.py", "stop"], cwd=ROOT)
        elif embedded:
            log("leaving the embedded services running: they were running before this run started")
        lock.close()


if __name__ == "__main__":
    sys.exit(main())
