"""The OpenAPI schema is what clients get: real responses of every endpoint, successes and errors,
validate against the schema that /api/schema/ serves (objects held strictly to their declared
properties), and every operation in the schema is exercised."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from accounts.services import token_create
from corpus.models import Collection, Document
from tests.chat.chat_corpus import GUIDE, make_collection, make_document
from tests.sources.helpers import allow_folders

pytestmark = pytest.mark.django_db


def json_schema(node):
    """OpenAPI 3.0 schema objects as JSON Schema: `nullable` as a null alternative, and objects with
    declared properties closed to others (so an undeclared field in a response fails)."""
    if isinstance(node, list):
        return [json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: json_schema(value) for key, value in node.items()}
    if "properties" in node and "additionalProperties" not in node:
        node["additionalProperties"] = False
    if node.pop("nullable", False):
        node = {"anyOf": [node, {"type": "null"}]}
    return node


class SchemaChecker:
    def __init__(self, schema: dict):
        self.schema = schema
        self.components = json_schema(copy.deepcopy(schema["components"]))
        self.checked: set[tuple[str, str, int]] = set()

    def check(self, response, path: str) -> dict | None:
        """Validate `response` against the schema of its operation (`path` as in the schema) and status."""
        method = response.wsgi_request.method.lower()
        operation = self.schema["paths"][path][method]
        declared = operation["responses"].get(str(response.status_code))
        assert declared is not None, f"{method.upper()} {path}: {response.status_code} is not declared"
        self.checked.add((path, method, response.status_code))
        if "content" not in declared:
            assert not response.content, f"{method.upper()} {path}: undeclared body"
            return None
        assert response["Content-Type"].startswith("application/json")
        body = response.json()
        schema = {**json_schema(declared["content"]["application/json"]["schema"]), "components": self.components}
        jsonschema.Draft202012Validator(schema).validate(body)
        return body


@pytest.fixture
def world(user, other_user):
    guides = make_collection("guides", owner=user)
    make_document(guides, source="deploy.md", title="Deployment guide", parts=GUIDE)
    make_collection("secret", owner=other_user)
    theirs = make_collection("shared", owner=other_user, public=True)
    make_document(theirs, source="shared.md", title="Shared", parts=GUIDE[:2])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
    return api


def test_every_response_matches_the_schema(world, no_llm, django_capture_on_commit_callbacks, settings, tmp_path,
                                           user, other_user):
    settings.MEDIA_ROOT = tmp_path
    api = world
    schema = api.get("/api/schema/", {"format": "json"}).json()
    checker = SchemaChecker(schema)
    check = checker.check
    anonymous = APIClient()
    guide = Document.objects.get(source="deploy.md")
    shared = Document.objects.get(source="shared.md")

    # search
    body = check(api.post("/api/search/", {"query": "request timeout", "k": 3}, format="json"), "/api/search/")
    assert body["chunks"] and body["segments"]
    check(api.post("/api/search/", {"query": ""}, format="json"), "/api/search/")
    check(api.post("/api/search/", {"query": "x", "collection": "secret"}, format="json"), "/api/search/")
    check(anonymous.post("/api/search/", {"query": "x"}, format="json"), "/api/search/")

    # ask
    body = check(api.post("/api/ask/", {"question": "What is the request timeout?"}, format="json"), "/api/ask/")
    assert body["citations"] and body["mode"] == "extractive"
    check(api.post("/api/ask/", {"question": " "}, format="json"), "/api/ask/")
    check(api.post("/api/ask/", {"question": "x", "collection": "secret"}, format="json"), "/api/ask/")

    # rating an answer
    path = "/api/messages/{id}/feedback/"
    rated = f"/api/messages/{body['message']}/feedback/"
    check(api.post(rated, {"rating": "down", "source": 1, "evidence": ["not in it at all"]}, format="json"), path)
    check(api.post(rated, {"rating": "up", "comment": "Good."}, format="json"), path)
    check(api.post(rated, {"rating": "meh"}, format="json"), path)
    check(api.post("/api/messages/999999/feedback/", {"rating": "up"}, format="json"), path)
    check(api.delete(rated), path)

    # collections
    body = check(api.get("/api/collections/"), "/api/collections/")
    assert body["count"] == 2
    body = check(api.post("/api/collections/", {"name": "Notes", "readers": ["bob"]}, format="json"),
                 "/api/collections/")
    assert body["slug"] == "notes"
    check(api.post("/api/collections/", {"name": "Notes"}, format="json"), "/api/collections/")
    path = "/api/collections/{slug}/"
    check(api.get("/api/collections/notes/"), path)
    check(api.get("/api/collections/shared/"), path)
    check(api.get("/api/collections/secret/"), path)
    check(api.patch("/api/collections/notes/", {"editors": ["bob"], "chunk_size": 256}, format="json"), path)
    check(api.patch("/api/collections/notes/", {"chunk_size": 1}, format="json"), path)
    check(api.patch("/api/collections/shared/", {"name": "Mine"}, format="json"), path)

    # share invitations (bob's: alice shared "Notes" and "Guides" with him)
    check(api.patch("/api/collections/guides/", {"readers": ["bob"]}, format="json"), path)
    bob = APIClient()
    bob.force_authenticate(other_user)
    body = check(bob.get("/api/invitations/"), "/api/invitations/")
    notes, drafts = (next(i["id"] for i in body["results"] if i["collection"]["slug"] == slug)
                     for slug in ("notes", "guides"))
    check(bob.post(f"/api/invitations/{notes}/accept/"), "/api/invitations/{id}/accept/")
    check(bob.post(f"/api/invitations/{drafts}/decline/"), "/api/invitations/{id}/decline/")
    check(bob.post(f"/api/invitations/{drafts}/accept/"), "/api/invitations/{id}/accept/")
    check(anonymous.get("/api/invitations/"), "/api/invitations/")

    # documents
    path = "/api/documents/"
    body = check(api.get(path), path)
    assert body["count"] == 2
    check(api.get(path, {"status": "bogus"}), path)
    check(api.get(path, {"collection": "secret"}), path)
    with django_capture_on_commit_callbacks(execute=False):
        body = check(api.post(path, {"files": [SimpleUploadedFile("a.md", b"# A\n\nText.")], "collection": "notes"},
                              format="multipart"), path)
        assert body["accepted"] == 1
        body = check(api.post(path, {"files": [SimpleUploadedFile("b.md", b"# B\n\nText."),
                                               SimpleUploadedFile("c.md", b"")], "collection": "notes"},
                              format="multipart"), path)
        assert (body["accepted"], body["refused"]) == (1, 1)
        body = check(api.post(path, {"file": SimpleUploadedFile("c.exe", b"MZ"), "collection": "notes"},
                              format="multipart"), path)
        assert body["refused"] == 1
        check(api.post(path, {"collection": "notes"}, format="multipart"), path)
        check(api.post(path, {"file": SimpleUploadedFile("d.md", b"# D"), "collection": "shared"},
                       format="multipart"), path)
        check(api.post(path, {"file": SimpleUploadedFile("d.md", b"# D"), "collection": "secret"},
                       format="multipart"), path)
    uploaded = Document.objects.get(source="a.md")

    path = "/api/documents/{id}/"
    check(api.get(f"/api/documents/{guide.pk}/"), path)
    check(api.get("/api/documents/999999/"), path)
    check(api.patch(f"/api/documents/{uploaded.pk}/", {"collection": "guides"}, format="json"), path)
    check(api.patch(f"/api/documents/{uploaded.pk}/", {"collection": "shared"}, format="json"), path)
    check(api.patch(f"/api/documents/{uploaded.pk}/", {}, format="json"), path)
    path = "/api/documents/{id}/move/"
    check(api.post(f"/api/documents/{uploaded.pk}/move/", {"collection": "notes"}, format="json"), path)
    check(api.post(f"/api/documents/{shared.pk}/move/", {"collection": "notes"}, format="json"), path)
    check(api.post(f"/api/documents/{uploaded.pk}/move/", {"collection": "secret"}, format="json"), path)
    path = "/api/documents/{id}/reingest/"
    with django_capture_on_commit_callbacks(execute=False):
        check(api.post(f"/api/documents/{guide.pk}/reingest/"), path)
    check(api.post(f"/api/documents/{shared.pk}/reingest/"), path)
    path = "/api/documents/{id}/chunks/"
    body = check(api.get(f"/api/documents/{guide.pk}/chunks/"), path)
    assert body["count"] == len(GUIDE)
    check(api.get("/api/documents/999999/chunks/"), path)
    path = "/api/documents/{id}/"
    check(api.delete(f"/api/documents/{shared.pk}/"), path)
    check(api.delete(f"/api/documents/{uploaded.pk}/"), path)
    check(api.delete("/api/collections/shared/"), "/api/collections/{slug}/")
    check(api.delete("/api/collections/notes/"), "/api/collections/{slug}/")
    assert not Collection.objects.filter(slug="notes").exists()

    # tokens
    path = "/api/tokens/"
    body = check(api.post(path, {"name": "ci", "read_only": True, "expires": "2999-01-01T00:00:00Z"},
                          format="json"), path)
    assert body["key"].startswith(body["prefix"]) and body["read_only"]
    made = body["id"]
    check(api.post(path, {"name": "old", "expires": "2000-01-01T00:00:00Z"}, format="json"), path)
    body = check(api.get(path), path)
    assert [t["name"] for t in body["results"]] == ["ci", "token"]
    _, read_only_key = token_create(user=Collection.objects.get(slug="secret").owner, read_only=True)
    reader = APIClient(HTTP_AUTHORIZATION=f"Token {read_only_key}")
    check(reader.post(path, {"name": "x"}, format="json"), path)  # 403: a read-only token makes none
    path = "/api/tokens/{id}/"
    check(api.delete(f"/api/tokens/{made}/"), path)
    check(api.delete(f"/api/tokens/{made}/"), path)

    # sources

    (tmp_path / "shared" / "handbook").mkdir(parents=True)
    (tmp_path / "shared" / "handbook" / "a.md").write_text("# A\n\nalpha\n")
    settings.SOURCES_FOLDERS = [str(tmp_path / "shared")]
    allow_folders(user)
    path = "/api/sources/"
    with django_capture_on_commit_callbacks(execute=False):
        body = check(api.post(path, {"collection": "guides", "kind": "folder", "path": "handbook", "tags": ["hb"]},
                              format="json"), path)
        check(api.post(path, {"collection": "guides", "kind": "folder", "path": "/etc"}, format="json"), path)
        check(api.post(path, {"collection": "secret", "kind": "url", "url": "https://e.org/"}, format="json"), path)
    source = body["id"]
    check(api.get(path), path)
    path = "/api/sources/{id}/"
    check(api.get(f"/api/sources/{source}/"), path)
    check(api.patch(f"/api/sources/{source}/", {"schedule": "weekly"}, format="json"), path)
    check(api.patch(f"/api/sources/{source}/", {"max_pages": 0}, format="json"), path)
    check(api.get("/api/sources/999999/"), path)
    body = check(api.post(f"/api/sources/{source}/sync/"), "/api/sources/{id}/sync/")
    assert body["url"] == f"/api/sources/{source}/"
    check(api.post("/api/sources/999999/sync/"), "/api/sources/{id}/sync/")
    check(api.post(f"/api/sources/{source}/take-over/"), "/api/sources/{id}/take-over/")
    check(api.post("/api/sources/999999/take-over/"), "/api/sources/{id}/take-over/")
    check(api.delete(f"/api/sources/{source}/"), path)

    # /v1
    body = check(api.get("/v1/models"), "/v1/models")
    assert [m["id"] for m in body["data"]] == ["ragweb", "ragweb/guides", "ragweb/shared"]
    check(api.get("/v1/models/ragweb/guides"), "/v1/models/{model}")
    check(api.get("/v1/models/ragweb/secret"), "/v1/models/{model}")
    check(anonymous.get("/v1/models"), "/v1/models")
    path = "/v1/chat/completions"
    question = [{"role": "user", "content": "What is the request timeout?"}]
    body = check(api.post(path, {"model": "ragweb/guides", "messages": question}, format="json"), path)
    assert body["citations"]
    check(api.post(path, {"model": "ragweb/secret", "messages": question}, format="json"), path)
    check(api.post(path, {"model": "ragweb", "messages": []}, format="json"), path)

    operations = {(p, m) for p, item in schema["paths"].items() for m in item if m != "parameters"}
    succeeded = {(p, m) for p, m, code in checker.checked if code < 300}
    assert operations - {("/api/schema/", "get")} <= succeeded, "operations never exercised"
    errors = {code for _, _, code in checker.checked if code >= 400}
    assert {400, 401, 403, 404} <= errors


def test_schema_is_viewable_in_a_browser_as_json_and_available_as_yaml(world):
    browser_accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    for query in ({"format": "json"}, {}):
        response = world.get("/api/schema/", query, HTTP_ACCEPT=browser_accept)
        assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
        assert response.json()["openapi"].startswith("3.") and "attachment" not in response["Content-Disposition"]
    response = world.get("/api/schema/", {"format": "yaml"})
    assert response.status_code == 200 and response.content.startswith(b"openapi: 3.")


def test_errors_found_by_schemathesis_match_the_schema(world):
    """Bodies schemathesis found outside the schema (2026-11-27): a list field's messages keyed by
    index, an error as a server-sent event, and /v1's `param` for a list field's item."""
    api = world
    checker = SchemaChecker(api.get("/api/schema/", {"format": "json"}).json())
    make_collection("notes", owner=User.objects.get(username="alice"))

    bad = api.patch("/api/collections/notes/", {"editor_groups": ["g" * 200]}, format="json")
    assert bad.status_code == 400 and set(bad.json()["editor_groups"]) == {"0"}
    checker.check(bad, "/api/collections/{slug}/")

    streamed = api.post("/api/ask/?format=sse", {"question": "x", "collection": "secret"}, format="json")
    assert streamed.status_code == 404 and streamed["Content-Type"].startswith("text/event-stream")
    lines = dict(line.split(": ", 1) for line in streamed.content.decode().splitlines() if line)
    declared = checker.schema["paths"]["/api/ask/"]["post"]["responses"]["404"]["content"]["text/event-stream"]
    jsonschema.Draft202012Validator(json_schema(declared["schema"])).validate(lines)
    assert lines["event"] == "error" and "secret" in json.loads(lines["data"])["detail"]

    wrong = api.post("/v1/chat/completions", {"model": "ragweb", "messages": [[None, None]]}, format="json")
    assert wrong.status_code == 400
    assert wrong.json()["error"]["param"] == "messages"
    checker.check(wrong, "/v1/chat/completions")
