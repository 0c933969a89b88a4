"""GET /healthz: database (+pgvector), broker and worker, as JSON; 503 when not healthy.

Anyone gets the status ({"status": "ok" | "unhealthy"} with 200 | 503); signed-in staff also get
the details (versions, error texts, worker and document counts), which tell an attacker too much,
while the database answers (their session is in it); a database failure is logged.

It also counts the documents in progress and, among them, the stalled ones: shown in progress
while no live worker holds them (their worker died; a worker that starts requeues them). With read
replicas configured (DATABASE_REPLICA_URLS), staff also see each one's state: usable, lag, error.
"""

from __future__ import annotations

import logging

# The project's Celery app (ragweb.celery, made current when Django loads): apps sit below the project shell.
from celery import current_app as celery_app
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from corpus.ingest.pipeline import stalled_document_ids
from corpus.models import IN_PROGRESS, Document
from replicas.health import report as replicas_report

logger = logging.getLogger(__name__)


def _database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('server_version'), "
                           "(SELECT extversion FROM pg_extension WHERE extname = 'vector')")
            server, pgvector = cursor.fetchone()
    except Exception as exc:  # any failure to reach the database is "unhealthy", with its reason
        return {"ok": False, "error": str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)}
    return {"ok": pgvector is not None, "postgres": server, "pgvector": pgvector}


def _broker() -> dict:
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        return {"ok": False, "error": str(exc)}
    return {"ok": True}


def _workers(broker_ok: bool) -> dict:
    if not broker_ok:
        return {"ok": False, "count": 0}
    try:
        replies = celery_app.control.ping(timeout=1.0) or []
    except Exception as exc:
        return {"ok": False, "count": 0, "error": str(exc)}
    return {"ok": bool(replies), "count": len(replies)}


def _documents() -> dict:
    try:
        return {"in_progress": Document.objects.filter(status__in=IN_PROGRESS).count(),
                "stalled": len(stalled_document_ids())}
    except Exception as exc:
        return {"error": str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)}


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    database = _database()
    broker = _broker()
    workers = _workers(broker["ok"])
    healthy = database["ok"] and broker["ok"] and workers["ok"]
    body = {"status": "ok" if healthy else "unhealthy"}
    if not database["ok"]:
        logger.warning("/healthz: database: %s", database.get("error", "pgvector missing"))
    if database["ok"] and request.user.is_active and request.user.is_staff:  # the session is in the database
        body.update(database=database, broker=broker, workers=workers)
        if database["ok"]:
            body["documents"] = _documents()
        if settings.REPLICA_DATABASES:  # their state; a replica down only sends searches to the primary
            body["replicas"] = replicas_report()
    return JsonResponse(body, status=200 if healthy else 503)
