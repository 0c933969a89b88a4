import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragweb.settings")

app = Celery("ragweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The name of the scheduler that `celery worker --beat` (make run) forks (ps, /proc/PID/comm).
SCHEDULER_NAME = "ragweb-beat"


@app.task(name="ragweb.ping")
def ping() -> str:
    """Round trip through the broker; used by /healthz and the tests."""
    return "pong"


@signals.worker_init.connect
def _read_from_the_primary(**_kwargs) -> None:
    """Workers never read from a replica: the pipeline reads what it has just written."""
    from replicas.routing import use_primary_only

    use_primary_only()


@signals.worker_init.connect
def load_model_before_forking_the_pool(**kwargs) -> None:
    """The worker's main process loads the embedding model before it forks its pool, so the pool
    processes (and those that replace a dead one) share one copy (corpus.ingest.embed.load_before_fork)."""
    if os.environ.get("RAGWEB_WARM_UP", "1") == "1":
        from corpus.ingest.embed import load_before_fork

        load_before_fork()


@signals.task_postrun.connect
def _give_back_what_the_task_freed(**_kwargs) -> None:
    """A task's peak (parse buffers, embedding batches) is not kept for the idle hours after it."""
    from lib.memory import release_freed_memory

    release_freed_memory()


@signals.beat_embedded_init.connect
def _name_the_embedded_scheduler(**_kwargs) -> None:
    """The scheduler forked inside the worker (scripts/run.py's beat_options) would show the worker's
    command line: named, it can be told from the pool process (ps, reliability.memory)."""
    from lib.process_name import set_process_name

    set_process_name(SCHEDULER_NAME)


@signals.worker_process_init.connect
def _yield_the_cpu_to_searches(**_kwargs) -> None:
    """A pool process runs background work only (ingestion, the graph merge, sentence vectors, syncs): it and
    the Postgres backends of its connections, when the server is on this machine, run at the lowest CPU
    priority, so a busy worker slows the web server's searches less and still has every core nobody else
    wants (lib.priority; docs/scaling.md, "A merge that keeps up")."""
    from django.db.backends.signals import connection_created

    from lib.priority import lower_this_thread

    lower_this_thread()
    connection_created.connect(_lower_the_backend, dispatch_uid="ragweb_background_backend")


def _lower_the_backend(sender, connection, **_kwargs) -> None:
    if connection.vendor == "postgresql":
        from lib.priority import lower_backend

        lower_backend(connection.connection)
