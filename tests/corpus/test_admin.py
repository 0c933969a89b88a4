"""corpus.admin: status columns, upload, re-ingest and delete actions through the services."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from corpus import services
from corpus.models import Chunk, Collection, Document
from tests.corpus.ingest_helpers import GUIDE_V1, eager_media  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_media")]


@pytest.fixture
def admin_client(client, django_user_model):
    admin = django_user_model.objects.create_superuser(username="root", password="root-password-1")
    client.force_login(admin)
    return client


@pytest.fixture
def document(django_capture_on_commit_callbacks) -> Document:
    collection = Collection.objects.create(slug="garden", name="Garden", chunk_size=32, chunk_overlap=0)
    with django_capture_on_commit_callbacks(execute=True):
        document = services.document_ingest(collection=collection, source="guide.md", data=GUIDE_V1,
                                            filename="guide.md")
    document.refresh_from_db()
    return document


def test_document_list_shows_status_progress_and_chunk_count(admin_client, document):
    page = admin_client.get("/admin/corpus/document/").content.decode()
    chunks = Chunk.objects.filter(document=document).count()

    assert "Garden guide" in page and "ready" in page
    assert f"{chunks}/{chunks}" in page
    detail = admin_client.get(f"/admin/corpus/document/{document.pk}/change/").content.decode()
    assert f"?document__id__exact={document.pk}" in detail
    assert admin_client.get(f"/admin/corpus/chunk/?document__id__exact={document.pk}").status_code == 200


def test_reingest_action_rebuilds_through_the_services(admin_client, document, django_capture_on_commit_callbacks):
    old_ids = set(Chunk.objects.filter(document=document).values_list("pk", flat=True))

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post("/admin/corpus/document/", {
            "action": "reingest_documents", "_selected_action": [document.pk]})

    assert response.status_code == 302
    document.refresh_from_db()
    assert document.status == Document.Status.READY
    assert not old_ids & set(Chunk.objects.filter(document=document).values_list("pk", flat=True))


def test_delete_action_removes_chunks_and_file(admin_client, document, django_capture_on_commit_callbacks):
    path = Path(document.file.path)

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post("/admin/corpus/document/", {"action": "delete_documents",
                                                      "_selected_action": [document.pk]})

    assert not Document.objects.exists() and not Chunk.objects.exists() and not path.exists()


def test_adding_a_document_is_an_upload(admin_client, django_capture_on_commit_callbacks):
    collection = Collection.objects.create(slug="garden", name="Garden", chunk_size=32, chunk_overlap=0)

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post("/admin/corpus/document/add/", {
            "collection": collection.pk, "source": "", "upload": SimpleUploadedFile("guide.md", GUIDE_V1)})

    assert response.status_code == 302, response.content.decode()[:2000]
    document = Document.objects.get()
    assert document.source == "guide.md" and document.status == Document.Status.READY
    assert Chunk.objects.filter(document=document).exists()


def test_chunks_are_read_only(admin_client, document):
    chunk = Chunk.objects.filter(document=document).first()

    assert admin_client.get("/admin/corpus/chunk/add/").status_code == 403
    page = admin_client.get(f"/admin/corpus/chunk/{chunk.pk}/change/")
    assert page.status_code == 200 and b'name="text"' not in page.content
