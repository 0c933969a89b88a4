"""Each audited action, done through its real surface, leaves exactly one event naming who did it
and to what, and never a secret."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import token_create
from audit.models import Action, AuditEvent
from corpus.models import Collection, Document

pytestmark = pytest.mark.django_db


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def only_event(action: str) -> AuditEvent:
    events = list(AuditEvent.objects.filter(action=action))
    assert len(events) == 1, [str(e) for e in events]
    return events[0]


@pytest.fixture
def owned(user):
    return Collection.objects.create(slug="recipes", name="Recipes", owner=user)


def test_sign_in_failed_sign_in_and_sign_out_are_recorded_with_the_address(user):
    client = Client(REMOTE_ADDR="203.0.113.7")
    assert client.post("/login/", {"username": "alice", "password": "wrong-password"}).status_code == 200
    failed = only_event(Action.SIGN_IN_FAILED)
    assert (failed.actor, failed.target_label, failed.ip) == (None, "alice", "203.0.113.7")
    assert "wrong-password" not in json.dumps(failed.detail)

    assert client.post("/login/", {"username": "alice", "password": "alice-password-1"}).status_code == 302
    signed_in = only_event(Action.SIGN_IN)
    assert (signed_in.actor, signed_in.actor_username, signed_in.target_id) == (user, "alice", str(user.pk))

    assert client.post("/logout/").status_code == 302
    signed_out = only_event(Action.SIGN_OUT)
    assert (signed_out.actor, signed_out.ip) == (user, "203.0.113.7")


def test_token_made_and_revoked_through_the_api_never_records_the_key(user):
    client = api_as(user)
    response = client.post("/api/tokens/", {"name": "laptop"}, format="json")
    assert response.status_code == 201
    key, token_id = response.json()["key"], response.json()["id"]
    created = only_event(Action.TOKEN_CREATED)
    assert (created.actor, created.target_type, created.target_id) == (user, "accounts.apitoken", str(token_id))
    assert created.target_label.startswith("laptop")

    assert client.delete(f"/api/tokens/{token_id}/").status_code == 204
    revoked = only_event(Action.TOKEN_REVOKED)
    assert (revoked.actor, revoked.target_id) == (user, str(token_id))
    for event in AuditEvent.objects.all():
        assert key not in json.dumps(event.detail) + event.target_label


def test_a_token_revoked_by_staff_in_the_admin_names_the_staff_member(user, django_user_model):
    staff = django_user_model.objects.create_superuser("root", password="root-password-1")
    token, _ = token_create(user=user, name="old")
    client = Client()
    client.force_login(staff)
    response = client.post(f"/admin/accounts/apitoken/{token.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not ApiToken.objects.filter(pk=token.pk).exists()
    revoked = only_event(Action.TOKEN_REVOKED)
    assert (revoked.actor, revoked.target_id, revoked.detail["owner"]) == (staff, str(token.pk), "alice")


def test_sharing_changed_once_per_real_change(user, other_user, owned):
    client = api_as(user)
    assert client.patch("/api/collections/recipes/", {"readers": ["bob"]}, format="json").status_code == 200
    shared = only_event(Action.SHARING_CHANGED)
    assert (shared.actor, shared.target_type, shared.target_id) == (user, "corpus.collection", str(owned.pk))
    assert shared.detail == {"invited": ["bob (read)"]}  # someone new is invited (corpus.sharing)
    # The same readers again change nothing, so nothing is recorded.
    assert client.patch("/api/collections/recipes/", {"readers": ["bob"]}, format="json").status_code == 200
    assert AuditEvent.objects.filter(action=Action.SHARING_CHANGED).count() == 1


def test_sharing_changed_on_the_collection_page(user, other_user, owned):
    client = Client()
    client.force_login(user)
    response = client.post("/documents/collections/recipes/share/", {"readers": "bob", "editors": ""})
    assert response.status_code == 302
    shared = only_event(Action.SHARING_CHANGED)
    assert (shared.actor, shared.target_label, shared.detail["invited"]) == (user, str(owned), ["bob (read)"])


def test_document_and_collection_deletions(user, owned):
    document = Document.objects.create(collection=owned, source="soup.md", title="Soup")
    client = api_as(user)
    assert client.delete(f"/api/documents/{document.pk}/").status_code == 204
    deleted = only_event(Action.DOCUMENT_DELETED)
    assert (deleted.actor, deleted.target_type, deleted.target_id) == (user, "corpus.document", str(document.pk))
    assert deleted.detail == {"collection": "recipes", "source": "soup.md"}

    assert client.delete("/api/collections/recipes/").status_code == 204
    gone = only_event(Action.COLLECTION_DELETED)
    assert (gone.actor, gone.target_id, gone.target_label) == (user, str(owned.pk), str(owned))
    assert not Collection.objects.filter(pk=owned.pk).exists()


def test_a_refused_deletion_records_nothing(other_user, owned):
    assert api_as(other_user).delete("/api/collections/recipes/").status_code == 404
    assert not AuditEvent.objects.filter(action=Action.COLLECTION_DELETED).exists()


def test_making_a_collection_public_is_a_sharing_change_by_the_staff_member(owned, django_user_model):
    staff = django_user_model.objects.create_user("sam", password=None, is_staff=True, is_superuser=True)
    client = api_as(staff)
    assert client.patch("/api/collections/recipes/", {"is_public": True}, format="json").status_code == 200
    assert client.patch("/api/collections/recipes/", {"is_public": True, "name": "Recipes"},
                        format="json").status_code == 200  # no change: no second event
    event = only_event(Action.SHARING_CHANGED)
    assert (event.actor, event.detail) == (staff, {"is_public": {"from": False, "to": True}})


def test_a_collection_created_public_is_a_sharing_change_and_a_private_one_records_nothing(django_user_model):
    staff = django_user_model.objects.create_user("sam", password=None, is_staff=True)
    client = api_as(staff)
    assert client.post("/api/collections/", {"name": "Private notes"}, format="json").status_code == 201
    assert not AuditEvent.objects.filter(action=Action.SHARING_CHANGED).exists()
    assert client.post("/api/collections/", {"name": "Handbook", "is_public": True}, format="json").status_code == 201
    event = only_event(Action.SHARING_CHANGED)
    handbook = Collection.objects.get(slug="handbook")
    assert (event.actor, event.target_id, event.detail) == (staff, str(handbook.pk),
                                                            {"is_public": {"from": None, "to": True}})


def test_a_collection_created_public_on_the_page_and_in_the_admin_is_audited(django_user_model):
    staff = django_user_model.objects.create_user("sam", password=None, is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    page = client.post("/documents/collections/new/", {
        "name": "Handbook", "slug": "", "description": "", "chunker": "markdown", "chunk_size": 256,
        "chunk_overlap": 0, "semantic_threshold": 0.5, "contextualization": "header",
        "embedding_mode": "neighbours", "is_public": "on"})
    assert page.status_code == 302, page.content.decode()[:2000]
    admin = client.post("/admin/corpus/collection/add/", {
        "name": "Atlas", "slug": "atlas", "owner": staff.pk, "description": "", "chunker": "markdown",
        "chunk_size": 256, "chunk_overlap": 0, "semantic_threshold": 0.5, "contextualization": "header",
        "embedding_mode": "neighbours", "is_public": "on"})
    assert admin.status_code == 302, admin.content.decode()[:3000]
    events = AuditEvent.objects.filter(action=Action.SHARING_CHANGED).order_by("id")
    assert [(e.actor, e.target_label, e.detail["is_public"]["to"]) for e in events] == [
        (staff, str(Collection.objects.get(slug="handbook")), True),
        (staff, str(Collection.objects.get(slug="atlas")), True)]


def test_a_source_change_records_each_changed_field_from_and_to(user, owned):
    from sources.models import Source

    source = Source.objects.create(collection=owned, kind="url", url="https://example.org/", schedule="none",
                                   max_pages=10)
    client = api_as(user)
    body = {"schedule": "weekly", "max_pages": 10, "tags": ["menus"]}
    assert client.patch(f"/api/sources/{source.pk}/", body, format="json").status_code == 200
    assert client.patch(f"/api/sources/{source.pk}/", body, format="json").status_code == 200  # nothing new
    event = only_event(Action.SOURCE_CHANGED)
    assert event.actor == user
    assert event.detail == {"schedule": {"from": "none", "to": "weekly"}, "tags": {"from": [], "to": ["menus"]}}
