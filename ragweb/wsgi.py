import os
import threading

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragweb.settings")
application = get_wsgi_application()

from corpus.ingest.embed import get_model, prefer_idle_threads  # noqa: E402 (needs the settings above)

prefer_idle_threads()  # before the warm-up below loads torch


def _warm_up_embedding_model() -> None:
    # Loading the model takes seconds; do it now rather than on the first question.
    get_model()


if os.environ.get("RAGWEB_WARM_UP", "1") == "1":
    threading.Thread(target=_warm_up_embedding_model, name="warm-up", daemon=True).start()
