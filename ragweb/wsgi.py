import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragweb.settings")
application = get_wsgi_application()

from corpus.ingest.embed import load_before_fork, prefer_idle_threads  # noqa: E402 (needs the settings above)

prefer_idle_threads()  # before the model below loads torch

if os.environ.get("RAGWEB_WARM_UP", "1") == "1":
    # Loading the model takes seconds: now rather than on the first question. With gunicorn's
    # --preload (make run, docker-compose) this runs once in the master, before it forks the workers,
    # and they share the model's memory; without it each worker loads its own before it serves.
    from importlib import import_module

    from django.conf import settings

    import_module(settings.ROOT_URLCONF)  # the views and what they import: shared by the workers too
    # The quotas' Redis cache backend (and redis-py) too, imported now and not by a flood of first
    # requests at once, each waiting on the import (no connection is opened before the fork).
    for module in ("redis", "django.core.cache.backends.redis"):
        import_module(module)
    load_before_fork()
    from chat.answering.reading import preload  # the reader's model (one inference thread: fork-safe)

    preload()
