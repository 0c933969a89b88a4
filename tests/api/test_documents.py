"""/api/documents/: list, upload (with validation), show, delete, re-ingest, and permissions."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from corpus import services
from corpus.models import Chunk, Collection, Document
from tests.corpus.ingest_helpers import GUIDE_V1, GUIDE_V2, eager_media  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_media")]
Status = Document.Status


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def mine(user) -> Collection:
    return Collection.objects.create(slug="mine", name="Mine", owner=user, chunk_size=32, chunk_overlap=0)


@pytest.fixture
def public_theirs(other_user) -> Collection:
    return Collection.objects.create(slug="shared", name="Shared", owner=other_user, is_public=True)


@pytest.fixture
def private_theirs(other_user) -> Collection:
    return Collection.objects.create(slug="secret", name="Secret", owner=other_user)


def add(collection, source="guide.md", data=GUIDE_V1, capture=None) -> Document:
    with capture(execute=True):
        document = services.document_ingest(collection=collection, source=source, data=data, filename=source)
    document.refresh_from_db()
    return document


def upload(api, collection_slug, name="guide.md", data=GUIDE_V1, **extra):
    return api.post("/api/documents/", {"file": SimpleUploadedFile(name, data), "collection": collection_slug,
                                        **extra}, format="multipart")


def test_upload_ingests_into_a_writable_collection(api, mine, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(api, "mine", source="garden/guide.md")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["collection"] == "mine" and body["source"] == "garden/guide.md"
    document = Document.objects.get(pk=body["id"])
    document.refresh_from_db()
    assert document.status == Status.READY and document.uploaded_by.username == "alice"
    shown = api.get(f"/api/documents/{document.pk}/").json()
    assert shown["status"] == "ready" and shown["chunk_count"] == Chunk.objects.filter(document=document).count() > 0
    assert shown["title"] == "Garden guide"


@pytest.mark.parametrize(("name", "data", "message"), [
    ("empty.md", b"", "empty"),
    ("program.exe", b"MZ\x90\x00", "Unsupported file type '.exe'"),
    ("huge.txt", b"x" * 2048, "limit"),
])
def test_bad_uploads_are_refused_with_a_message(api, mine, settings, name, data, message):
    settings.MAX_UPLOAD_BYTES = 1024
    response = upload(api, "mine", name=name, data=data)

    assert response.status_code == 400
    assert message in " ".join(response.json()["file"])
    assert not Document.objects.exists()


def test_upload_needs_an_existing_readable_collection(api, private_theirs):
    for slug in ("nope", "secret"):
        response = upload(api, slug)
        assert response.status_code == 404
        assert response.json() == {"detail": f"No collection {slug!r} that you may read."}
    assert upload(api, "").status_code == 400
    assert not Document.objects.exists()


def test_upload_to_a_read_only_collection_is_forbidden(api, public_theirs):
    response = upload(api, "shared")

    assert response.status_code == 403
    assert response.json() == {"detail": "You may not change documents of the collection 'shared'."}
    assert not Document.objects.exists()


def test_list_and_show_only_readable_documents(api, mine, public_theirs, private_theirs,
                                               django_capture_on_commit_callbacks):
    own = add(mine, capture=django_capture_on_commit_callbacks)
    shared = add(public_theirs, source="shared.md", data=GUIDE_V2, capture=django_capture_on_commit_callbacks)
    secret = add(private_theirs, source="secret.md", capture=django_capture_on_commit_callbacks)

    listed = api.get("/api/documents/").json()
    assert listed["count"] == 2
    assert {d["id"] for d in listed["results"]} == {own.pk, shared.pk}
    assert [d["id"] for d in api.get("/api/documents/?collection=shared").json()["results"]] == [shared.pk]
    assert api.get(f"/api/documents/{secret.pk}/").status_code == 404
    assert api.get("/api/documents/?status=bogus").status_code == 400


def test_delete_removes_the_document_its_chunks_and_file(api, mine, django_capture_on_commit_callbacks):
    document = add(mine, capture=django_capture_on_commit_callbacks)
    path = Path(document.file.path)

    with django_capture_on_commit_callbacks(execute=True):
        response = api.delete(f"/api/documents/{document.pk}/")

    assert response.status_code == 204
    assert not Document.objects.filter(pk=document.pk).exists()
    assert not Chunk.objects.filter(document_id=document.pk).exists() and not path.exists()
    assert api.get(f"/api/documents/{document.pk}/").status_code == 404


def test_delete_and_reingest_need_write_access(api, public_theirs, private_theirs,
                                               django_capture_on_commit_callbacks):
    shared = add(public_theirs, capture=django_capture_on_commit_callbacks)
    secret = add(private_theirs, source="secret.md", capture=django_capture_on_commit_callbacks)

    assert api.delete(f"/api/documents/{shared.pk}/").status_code == 403
    assert api.post(f"/api/documents/{shared.pk}/reingest/").status_code == 403
    assert api.delete(f"/api/documents/{secret.pk}/").status_code == 404
    assert api.post(f"/api/documents/{secret.pk}/reingest/").status_code == 404
    assert Document.objects.count() == 2


def test_reingest_rebuilds_when_forced(api, mine, django_capture_on_commit_callbacks):
    document = add(mine, capture=django_capture_on_commit_callbacks)
    old_ids = set(Chunk.objects.filter(document=document).values_list("pk", flat=True))

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        unchanged = api.post(f"/api/documents/{document.pk}/reingest/")
    assert unchanged.status_code == 202 and callbacks == []

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        forced = api.post(f"/api/documents/{document.pk}/reingest/?force=1")
    assert forced.status_code == 202 and len(callbacks) == 1
    assert forced.json()["status"] == "queued"
    document.refresh_from_db()
    assert document.status == Status.READY
    assert not old_ids & set(Chunk.objects.filter(document=document).values_list("pk", flat=True))


def test_token_authentication_and_anonymous_refusal(user, mine):
    token = Token.objects.create(user=user)
    client = APIClient()

    assert client.get("/api/documents/").status_code in (401, 403)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/documents/").status_code == 200


def test_the_schema_describes_the_documents_endpoints(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()

    assert {"/api/documents/", "/api/documents/{id}/", "/api/documents/{id}/reingest/"} <= set(schema["paths"])
    assert "multipart/form-data" in schema["paths"]["/api/documents/"]["post"]["requestBody"]["content"]
