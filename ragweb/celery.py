import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragweb.settings")

app = Celery("ragweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="ragweb.ping")
def ping() -> str:
    """Round trip through the broker; used by /healthz and the tests."""
    return "pong"
