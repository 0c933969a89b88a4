"""The documents page: upload, live status, re-ingest and delete, all behind corpus.permissions."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from corpus.models import Collection, Document

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    from ragweb.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture
def own_collection(user):
    return Collection.objects.create(slug="mine", name="Mine", owner=user)


@pytest.fixture
def foreign_collection(other_user):
    return Collection.objects.create(slug="theirs", name="Theirs", owner=other_user)


def test_page_requires_login(client):
    response = client.get("/documents/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_upload_ingests_into_a_writable_collection(client, user, own_collection, django_capture_on_commit_callbacks):
    client.force_login(user)
    upload = SimpleUploadedFile("notes.md", b"# Notes\n\nPostgres keeps the vectors.\n", content_type="text/markdown")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/documents/upload/", {"collection": own_collection.pk, "files": [upload]})
    assert response.status_code == 302
    document = Document.objects.get(collection=own_collection, source="notes.md")
    assert document.status == Document.Status.READY, document.error
    assert document.chunks.count() >= 1
    page = client.get("/documents/?collection=mine").content.decode()
    assert "notes.md" in page and "Ready" in page


def test_upload_into_someone_elses_collection_is_refused(client, user, foreign_collection):
    client.force_login(user)
    upload = SimpleUploadedFile("x.txt", b"hello", content_type="text/plain")
    response = client.post("/documents/upload/", {"collection": foreign_collection.pk, "files": [upload]},
                           follow=True)
    assert not Document.objects.filter(collection=foreign_collection).exists()
    assert "Select a valid choice" in response.content.decode()


def test_empty_upload_is_refused_with_a_message(client, user, own_collection):
    client.force_login(user)
    upload = SimpleUploadedFile("empty.txt", b"", content_type="text/plain")
    response = client.post("/documents/upload/", {"collection": own_collection.pk, "files": [upload]}, follow=True)
    assert not Document.objects.exists()
    assert "empty" in response.content.decode()


def test_list_shows_only_readable_documents(client, user, own_collection, foreign_collection):
    Document.objects.create(collection=own_collection, source="a.txt", title="Visible doc")
    Document.objects.create(collection=foreign_collection, source="b.txt", title="Hidden doc")
    client.force_login(user)
    page = client.get("/documents/").content.decode()
    assert "Visible doc" in page and "Hidden doc" not in page


def test_htmx_request_gets_the_table_partial_that_polls_while_in_progress(client, user, own_collection):
    Document.objects.create(collection=own_collection, source="a.txt", title="Busy", status="embedding",
                            progress_done=3, progress_total=10)
    client.force_login(user)
    response = client.get("/documents/", headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="document-table"')
    assert 'hx-trigger="every 2s"' in body
    assert "3/10" in body and "<html" not in body


def test_cannot_delete_or_reingest_a_document_of_another_user(client, user, foreign_collection):
    document = Document.objects.create(collection=foreign_collection, source="b.txt", title="Theirs")
    client.force_login(user)
    assert client.post(f"/documents/{document.pk}/delete/").status_code == 404
    assert client.post(f"/documents/{document.pk}/reingest/").status_code == 404
    assert Document.objects.filter(pk=document.pk).exists()


def test_reader_of_a_public_collection_cannot_delete(client, user, other_user):
    public = Collection.objects.create(slug="pub", name="Public", owner=other_user, is_public=True)
    document = Document.objects.create(collection=public, source="p.txt", title="Shared")
    client.force_login(user)
    assert "Shared" in client.get("/documents/").content.decode()
    assert client.post(f"/documents/{document.pk}/delete/").status_code == 404
    assert Document.objects.filter(pk=document.pk).exists()


def test_delete_removes_document(client, user, own_collection):
    document = Document.objects.create(collection=own_collection, source="a.txt", title="Gone soon")
    client.force_login(user)
    response = client.post(f"/documents/{document.pk}/delete/")
    assert response.status_code == 302
    assert not Document.objects.filter(pk=document.pk).exists()


def test_create_collection_makes_user_the_owner(client, user):
    client.force_login(user)
    response = client.post("/documents/collections/new/", {
        "name": "Handbook", "slug": "handbook", "description": "", "chunker": "markdown", "chunk_size": 200,
        "contextualization": "header", "embedding_mode": "plain"})
    assert response.status_code == 302
    collection = Collection.objects.get(slug="handbook")
    assert collection.owner == user
