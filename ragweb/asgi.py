import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragweb.settings")
application = get_asgi_application()

from corpus.ingest.embed import prefer_idle_threads  # noqa: E402 (needs the settings above)

prefer_idle_threads()
