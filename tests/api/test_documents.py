"""/api/documents/: list (filters, pagination), upload of one or many files (a result per file),
show, move, delete, re-ingest, chunks, and permissions."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from accounts.services import token_create
from corpus import services
from corpus.models import Chunk, Collection, Document
from tests.corpus.ingest_helpers import GUIDE_V1, GUIDE_V2, eager_media, enqueued_builds  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_media")]
Status = Document.Status


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


def upload_many(api, collection_slug, files: list[tuple[str, bytes]]):
    return api.post("/api/documents/", {"files": [SimpleUploadedFile(name, data) for name, data in files],
                                        "collection": collection_slug}, format="multipart")


def test_upload_ingests_into_a_writable_collection(api, mine, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(api, "mine", source="garden/guide.md")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["accepted"], body["refused"], len(body["files"])) == (1, 0, 1)
    result = body["files"][0]
    assert result["accepted"] and result["error"] is None and result["name"] == "garden/guide.md"
    assert result["document"]["collection"] == "mine" and result["document"]["source"] == "garden/guide.md"
    document = Document.objects.get(pk=result["document"]["id"])
    document.refresh_from_db()
    assert document.status == Status.READY and document.uploaded_by.username == "alice"
    shown = api.get(f"/api/documents/{document.pk}/").json()
    assert shown["status"] == "ready" and shown["chunk_count"] == Chunk.objects.filter(document=document).count() > 0
    assert shown["title"] == "Garden guide"


@pytest.mark.parametrize(("name", "data", "message"), [
    ("empty.md", b"", "empty.md: the file is empty."),
    ("program.exe", b"MZ\x90\x00", "program.exe: this file type is not supported"),
    ("huge.txt", b"x" * 2048, "huge.txt: the file is 2.0 KB; the limit is 1.0 KB."),
])
def test_bad_uploads_are_refused_with_a_message(api, mine, settings, name, data, message):
    settings.MAX_UPLOAD_BYTES = 1024
    response = upload(api, "mine", name=name, data=data)

    assert response.status_code == 400
    body = response.json()
    assert (body["accepted"], body["refused"]) == (0, 1)
    assert body["files"][0]["error"].startswith(message) and body["files"][0]["document"] is None
    assert not Document.objects.exists()


def test_one_bad_file_never_blocks_the_others(api, mine, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload_many(api, "mine", [("a.md", GUIDE_V1), ("empty.txt", b""), ("b.md", GUIDE_V2),
                                             ("notes.xyz", b"hello")])

    assert response.status_code == 207
    body = response.json()
    assert (body["accepted"], body["refused"]) == (2, 2)
    assert [(f["name"], f["accepted"]) for f in body["files"]] == [
        ("a.md", True), ("empty.txt", False), ("b.md", True), ("notes.xyz", False)]
    assert body["files"][1]["error"] == "empty.txt: the file is empty."
    assert body["files"][3]["error"].startswith("notes.xyz: this file type is not supported")
    assert set(Document.objects.values_list("source", "status")) == {("a.md", Status.READY), ("b.md", Status.READY)}


def test_too_many_files_at_once_is_a_json_400(api, mine, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 3
    response = upload_many(api, "mine", [(f"f{i}.md", GUIDE_V1) for i in range(4)])

    assert response.status_code == 400 and response.json() == {"detail": "Send at most 3 files in one request."}
    assert not Document.objects.exists()


def test_upload_request_errors(api, mine):
    response = api.post("/api/documents/", {"collection": "mine"}, format="multipart")
    assert response.status_code == 400 and "at least one file" in response.json()["files"][0]
    response = api.post("/api/documents/", {
        "files": [SimpleUploadedFile("a.md", GUIDE_V1), SimpleUploadedFile("b.md", GUIDE_V2)],
        "collection": "mine", "source": "x.md"}, format="multipart")
    assert response.status_code == 400 and response.json()["source"] == [
        "A source can only be given with a single file."]
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
    unreadable = api.get("/api/documents/?collection=secret")
    assert unreadable.status_code == 404
    assert unreadable.json() == {"detail": "No collection 'secret' that you may read."}


def test_list_filters_and_pages(api, mine, django_capture_on_commit_callbacks):
    for name in ("alpha.md", "beta.md", "garden/gamma.md"):
        add(mine, source=name, data=GUIDE_V1 + name.encode(), capture=django_capture_on_commit_callbacks)
    Document.objects.filter(source="beta.md").update(status=Status.FAILED, error="Broken.")

    def sources(query):
        response = api.get(f"/api/documents/{query}")
        assert response.status_code == 200, response.json()
        return sorted(d["source"] for d in response.json()["results"])

    assert sources("?status=failed") == ["beta.md"]
    assert sources("?search=GAMMA") == ["garden/gamma.md"]  # in the source
    assert sources("?search=guide") == ["alpha.md", "beta.md", "garden/gamma.md"]  # in the title, "Garden guide"
    assert sources("?search=garden alpha") == ["alpha.md"]  # every word, in the title or the source
    assert sources("?collection=mine&status=ready") == ["alpha.md", "garden/gamma.md"]
    page = api.get("/api/documents/?limit=2").json()
    assert page["count"] == 3 and len(page["results"]) == 2 and page["next"] and page["previous"] is None
    rest = api.get("/api/documents/?limit=2&offset=2").json()
    assert len(rest["results"]) == 1 and rest["next"] is None
    failed = api.get(f"/api/documents/{Document.objects.get(source='beta.md').pk}/").json()
    assert (failed["status"], failed["error"]) == ("failed", "Broken.")


def test_chunks_of_a_document(api, mine, private_theirs, django_capture_on_commit_callbacks):
    document = add(mine, capture=django_capture_on_commit_callbacks)
    chunks = list(Chunk.objects.filter(document=document).order_by("chunk_index"))
    Chunk.objects.filter(pk=chunks[-1].pk).update(embedding=None)

    body = api.get(f"/api/documents/{document.pk}/chunks/").json()
    assert body["count"] == len(chunks) > 1
    assert [c["chunk_index"] for c in body["results"]] == list(range(len(chunks)))
    first = body["results"][0]
    assert (first["text"], first["start"], first["end"]) == (chunks[0].text, chunks[0].start, chunks[0].end)
    assert first["context"] == chunks[0].context and first["context"]
    assert [c["embedded"] for c in body["results"]] == [True] * (len(chunks) - 1) + [False]
    assert "".join(c["text"] for c in body["results"]) == document.text
    secret = add(private_theirs, source="secret.md", capture=django_capture_on_commit_callbacks)
    assert api.get(f"/api/documents/{secret.pk}/chunks/").status_code == 404


def test_move_between_writable_collections(api, user, mine, public_theirs, django_capture_on_commit_callbacks):
    document = add(mine, capture=django_capture_on_commit_callbacks)
    other = Collection.objects.create(slug="other", name="Other", owner=user, chunk_size=32, chunk_overlap=0)

    response = api.patch(f"/api/documents/{document.pk}/", {"collection": "other"}, format="json")
    assert response.status_code == 200 and response.json()["collection"] == "other"
    response = api.post(f"/api/documents/{document.pk}/move/", {"collection": "mine"}, format="json")
    assert response.status_code == 200 and response.json()["collection"] == "mine"
    document.refresh_from_db()
    assert document.collection == mine

    assert api.post(f"/api/documents/{document.pk}/move/", {"collection": "shared"},
                    format="json").status_code == 403  # readable, not writable
    assert api.post(f"/api/documents/{document.pk}/move/", {"collection": "secret"},
                    format="json").status_code == 404
    assert api.post(f"/api/documents/{document.pk}/move/", {}, format="json").status_code == 400
    add(other, capture=django_capture_on_commit_callbacks)  # the same source in the target
    clash = api.post(f"/api/documents/{document.pk}/move/", {"collection": "other"}, format="json")
    assert clash.status_code == 400 and "already has a document with this source" in clash.json()["detail"]
    document.refresh_from_db()
    assert document.collection == mine


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
    assert forced.status_code == 202 and enqueued_builds(callbacks) == 1
    assert forced.json()["status"] == "queued"
    document.refresh_from_db()
    assert document.status == Status.READY
    assert not old_ids & set(Chunk.objects.filter(document=document).values_list("pk", flat=True))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        in_body = api.post(f"/api/documents/{document.pk}/reingest/", {"force": True}, format="json")
    assert in_body.status_code == 202 and enqueued_builds(callbacks) == 1


def test_forced_reingests_are_limited_per_user_and_plain_ones_are_not_counted(api, mine, monkeypatch,
                                                                               django_capture_on_commit_callbacks):
    from django.core.cache import caches

    from corpus.quotas import ForcedReingestQuota

    monkeypatch.setattr(ForcedReingestQuota, "rate", "2/hour")
    caches["quotas"].clear()
    document = add(mine, capture=django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        plain = [api.post(f"/api/documents/{document.pk}/reingest/").status_code for _ in range(3)]
        forced = [api.post(f"/api/documents/{document.pk}/reingest/?force=1").status_code for _ in range(3)]
    assert plain == [202, 202, 202] and forced == [202, 202, 429]
    assert enqueued_builds(callbacks) == 2
    refused = api.post(f"/api/documents/{document.pk}/reingest/", {"force": True}, format="json")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    caches["quotas"].clear()


def test_token_authentication_and_anonymous_refusal(user, mine):
    token = token_create(user=user)[1]
    client = APIClient()

    assert client.get("/api/documents/").status_code in (401, 403)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/documents/").status_code == 200


def test_the_schema_describes_the_documents_endpoints(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()

    assert {"/api/documents/", "/api/documents/{id}/", "/api/documents/{id}/reingest/", "/api/documents/{id}/move/",
            "/api/documents/{id}/chunks/"} <= set(schema["paths"])
    assert "multipart/form-data" in schema["paths"]["/api/documents/"]["post"]["requestBody"]["content"]
    listing = schema["paths"]["/api/documents/"]["get"]["responses"]
    assert listing["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/PaginatedDocumentOutputList"}
    assert {"count", "next", "previous", "results"} <= set(
        schema["components"]["schemas"]["PaginatedDocumentOutputList"]["properties"])
    assert {"400", "401", "404"} <= set(listing)
    assert {"400", "401", "403", "404"} <= set(schema["paths"]["/api/documents/{id}/move/"]["post"]["responses"])
