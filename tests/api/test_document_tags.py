"""PATCH /api/documents/{id}/ with `tags`: editors only, validated, shown in the documents API."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from corpus.models import Collection, Document
from tests.api.test_documents import add
from tests.corpus.ingest_helpers import eager_media  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_media")]


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def document(user, django_capture_on_commit_callbacks) -> Document:
    collection = Collection.objects.create(slug="mine", name="Mine", owner=user, chunk_size=32, chunk_overlap=0)
    return add(collection, capture=django_capture_on_commit_callbacks)


def test_an_editor_sets_tags_and_every_listing_shows_them(user, document):
    api = client_for(user)
    response = api.patch(f"/api/documents/{document.pk}/", {"tags": ["garden", " beans ", "garden"]}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["metadata"]["tags"] == ["garden", "beans"]
    assert response.json()["metadata"]["path"] == "guide.md" and response.json()["collection"] == "mine"
    listed = api.get("/api/documents/").json()["results"][0]
    assert listed["metadata"]["tags"] == ["garden", "beans"] and listed["metadata"]["title"] == "Garden guide"
    document.refresh_from_db()
    assert document.metadata["tags"] == ["garden", "beans"] and document.metadata["media_type"] == "text/markdown"

    assert api.patch(f"/api/documents/{document.pk}/", {"tags": []}, format="json").json()["metadata"]["tags"] == []


@pytest.mark.parametrize(("body", "field", "message"), [
    ({"tags": "garden"}, "tags", "tags must be a list of strings."),
    ({"tags": [3]}, "tags", "Each tag must be a string."),
    ({"tags": ["x" * 65]}, "tags", "A tag is at most 64 characters."),
    ({"tags": ["a"], "colour": "red"}, "non_field_errors", "Unknown field(s): colour."),
    ({}, "non_field_errors", "Send `tags`, `collection` or both."),
])
def test_bad_tags_are_a_400_naming_the_field(user, document, body, field, message):
    response = client_for(user).patch(f"/api/documents/{document.pk}/", body, format="json")
    assert response.status_code == 400 and response.json()[field] == [message]
    document.refresh_from_db()
    assert document.metadata["tags"] == []


def test_only_editors_may_set_tags(user, other_user, document):
    reader = client_for(other_user)
    assert reader.patch(f"/api/documents/{document.pk}/", {"tags": ["x"]}, format="json").status_code == 404
    document.collection.readers.add(other_user)
    assert reader.patch(f"/api/documents/{document.pk}/", {"tags": ["x"]}, format="json").status_code == 403
    document.refresh_from_db()
    assert document.metadata["tags"] == []
    document.collection.editors.add(other_user)
    assert reader.patch(f"/api/documents/{document.pk}/", {"tags": ["x"]}, format="json").status_code == 200
    document.refresh_from_db()
    assert document.metadata["tags"] == ["x"]
