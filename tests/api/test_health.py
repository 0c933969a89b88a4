"""/healthz reports database (+pgvector), broker and worker; 200 only when all answer. The details
are for staff (the `client` here is a signed-in superuser); anonymous callers get the status only."""

import pytest
from django.db import connection


@pytest.fixture
def client(admin_client):
    return admin_client


@pytest.mark.django_db
def test_anonymous_callers_get_the_status_only(django_user_model, monkeypatch):
    from django.test import Client

    def broken_cursor(*args, **kwargs):
        raise connection.Database.OperationalError("password authentication failed for user ragweb")

    anonymous = Client()
    assert anonymous.get("/healthz").json().keys() == {"status"}
    monkeypatch.setattr(connection, "cursor", broken_cursor)
    response = anonymous.get("/healthz")
    assert (response.status_code, response.json()) == (503, {"status": "unhealthy"})


@pytest.mark.slow
def test_healthz_is_200_with_database_broker_and_worker(client, celery_worker_process):
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["database"]["pgvector"].startswith("0.")
    assert body["database"]["postgres"].split(".")[0].isdigit()
    assert body["broker"] == {"ok": True}
    assert body["workers"]["ok"] is True and body["workers"]["count"] >= 1


@pytest.mark.django_db
def test_healthz_is_503_without_a_worker(client, settings):
    # A private broker database: no worker consumes there, and the control ping gets no reply.
    response = client.get("/healthz")
    body = response.json()
    if body["workers"]["count"]:
        pytest.fail("a stray worker answered; the test needs none on this broker")
    assert response.status_code == 503
    assert body["status"] == "unhealthy"
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is True
    assert body["workers"] == {"ok": False, "count": 0}


@pytest.mark.django_db
def test_healthz_is_503_when_broker_unreachable(client, monkeypatch):
    from celery import Celery

    # Port 9 (discard) has no listener here: the connection is refused at once. Celery lets the
    # CELERY_BROKER_URL environment variable override the broker given, so drop it first.
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)
    # set_as_current=False: shared tasks elsewhere in the suite must keep the real app.
    monkeypatch.setattr("api.health.celery_app", Celery(broker="redis://127.0.0.1:9/0", set_as_current=False))
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503
    assert body["broker"]["ok"] is False and body["broker"]["error"], body
    assert body["workers"]["ok"] is False


@pytest.mark.django_db
def test_healthz_is_503_when_database_unreachable(client, monkeypatch):
    def broken_cursor(*args, **kwargs):
        raise connection.Database.OperationalError("connection refused")

    monkeypatch.setattr(connection, "cursor", broken_cursor)
    response = client.get("/healthz")
    # No session can be checked without the database: the status only; the reason goes to the log.
    assert (response.status_code, response.json()) == (503, {"status": "unhealthy"})


@pytest.mark.django_db
def test_healthz_counts_documents_left_in_progress_by_a_dead_worker(client):
    from corpus.models import Collection, Document

    collection = Collection.objects.create(slug="notes", name="Notes")
    Document.objects.create(collection=collection, source="a.md", status=Document.Status.EMBEDDING)
    Document.objects.create(collection=collection, source="b.md", status=Document.Status.READY)

    body = client.get("/healthz").json()

    # No live run holds its lock: stalled (a starting worker requeues it).
    assert body["documents"] == {"in_progress": 1, "stalled": 1}
