"""A document deleted by one request while another re-ingests or moves it: the second gets a 404
saying so, never a 500 (Document.DoesNotExist). Real concurrent transactions on the real Postgres:
the delete holds its transaction open until the other request is waiting on the row."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from corpus.models import Document
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db(transaction=True)


def waiting_on_a_lock(timeout: float = 10) -> bool:
    """Whether another session of this database is blocked on a lock (within `timeout`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND wait_event_type = 'Lock'")
            if cursor.fetchone()[0]:
                return True
        time.sleep(0.05)
    return False


def while_deleted(document: Document, request) -> object:
    """Run `request()` in a thread while another transaction deletes `document`; that transaction
    commits once the request waits on the row. Returns the request's response."""
    deleting, release = threading.Event(), threading.Event()
    result: dict = {}

    def delete() -> None:
        try:
            with transaction.atomic():
                Document.objects.filter(pk=document.pk).delete()
                deleting.set()
                release.wait(10)
        finally:
            connection.close()

    def send() -> None:
        try:
            result["response"] = request()
        finally:
            connection.close()

    deleter = threading.Thread(target=delete)
    deleter.start()
    assert deleting.wait(10)
    sender = threading.Thread(target=send)
    sender.start()
    try:
        assert waiting_on_a_lock()
    finally:
        release.set()
        deleter.join()
        sender.join(30)
    return result["response"]


@pytest.fixture
def document(user):
    return make_document(make_collection("guides", owner=user), source="deploy.md", parts=GUIDE)


def test_reingest_of_a_document_being_deleted_is_a_404(api, document):
    response = while_deleted(document, lambda: api.post(f"/api/documents/{document.pk}/reingest/", {"force": True},
                                                        format="json"))

    assert response.status_code == 404, response.content
    assert response.json() == {"detail": f"Document {document.pk} has just been deleted."}
    assert not Document.objects.exists()


def test_move_of_a_document_being_deleted_is_a_404(api, user, document):
    make_collection("elsewhere", owner=user)

    response = while_deleted(document, lambda: api.patch(f"/api/documents/{document.pk}/",
                                                         {"collection": "elsewhere"}, format="json"))

    assert response.status_code == 404, response.content
    assert response.json() == {"detail": f"Document {document.pk} has just been deleted."}
    assert not Document.objects.exists()
