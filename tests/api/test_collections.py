"""/api/collections/: list, create, show, change, share and delete; owners manage, editors write
documents only, non-readers get 404."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from corpus.models import Collection, Document
from corpus.selectors import NOT_SHAREABLE_PEOPLE

pytestmark = pytest.mark.django_db


@pytest.fixture
def owned(user, other_user, carol) -> Collection:
    """alice's collection, read by bob and edited by carol."""
    collection = Collection.objects.create(slug="recipes", name="Recipes", owner=user)
    collection.readers.add(other_user)
    collection.editors.add(carol)
    return collection


def test_create_makes_the_caller_owner_and_derives_the_slug(client_of, user, other_user):
    response = client_of(user).post("/api/collections/", {"name": "Team Handbook", "chunk_size": 300,
                                                           "readers": ["bob"]}, format="json")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["slug"], body["name"], body["owner"], body["chunk_size"]) == ("team-handbook", "Team Handbook",
                                                                               "alice", 300)
    assert (body["readers"], body["editors"], body["can_write"], body["can_manage"]) == ([], [], True, True)
    assert [(i["username"], i["role"], i["invited_by"]) for i in body["invitations"]] == [("bob", "read", "alice")]
    assert body["document_count"] == 0
    bob = client_of(other_user)
    assert bob.get("/api/collections/").json()["results"] == []  # invited: nothing until bob accepts
    invitation = bob.get("/api/invitations/").json()["results"][0]
    assert (invitation["collection"], invitation["invited_by"]) == ({"slug": "team-handbook",
                                                                      "name": "Team Handbook"}, "alice")
    accepted = bob.post(f"/api/invitations/{invitation['id']}/accept/")
    assert accepted.status_code == 200 and accepted.json() == {"collection": "team-handbook", "accepted": True}
    assert [c["slug"] for c in bob.get("/api/collections/").json()["results"]] == ["team-handbook"]
    assert client_of(user).get("/api/collections/team-handbook/").json()["readers"] == ["bob"]


@pytest.mark.parametrize(("body", "field", "message"), [
    ({}, "name", "required"),
    ({"name": "X", "slug": "recipes"}, "slug", "This slug is not available"),
    ({"name": "X", "slug": "not a slug"}, "slug", "valid"),
    ({"name": "X", "chunk_size": 5}, "chunk_size", "between 16 and 2048"),
    ({"name": "X", "chunk_size": 100, "chunk_overlap": 100}, "chunk_overlap", "smaller than the chunk size"),
    ({"name": "X", "chunker": "magic"}, "chunker", "not a valid choice"),
    ({"name": "X", "readers": ["nobody"]}, "readers", "is not someone you may share with"),
    ({"name": "X", "owner": "bob"}, "non_field_errors", "Unknown field(s): owner."),
])
def test_create_refuses_bad_input_per_field(client_of, user, owned, body, field, message):
    response = client_of(user).post("/api/collections/", body, format="json")

    assert response.status_code == 400
    assert message in " ".join(response.json()[field])
    assert Collection.objects.count() == 1


def test_each_role_sees_what_it_may_do(client_of, user, other_user, carol, owned, django_user_model):
    stranger = django_user_model.objects.create_user(username="dave", password="dave-password-1")
    seen = {u.username: client_of(u).get("/api/collections/recipes/") for u in (user, other_user, carol, stranger)}

    assert seen["alice"].json()["readers"] == ["bob"] and seen["alice"].json()["editors"] == ["carol"]
    assert (seen["bob"].json()["can_write"], seen["bob"].json()["can_manage"], seen["bob"].json()["readers"]) == (
        False, False, None)
    assert (seen["carol"].json()["can_write"], seen["carol"].json()["can_manage"]) == (True, False)
    assert seen["dave"].status_code == 404
    assert seen["dave"].json() == {"detail": "No collection 'recipes' that you may read."}
    assert client_of(stranger).get("/api/collections/").json()["count"] == 0


def test_owner_changes_and_shares(client_of, user, other_user, carol, owned):
    response = client_of(user).patch("/api/collections/recipes/", {"name": "Family recipes", "readers": [],
                                                                    "editors": ["carol", "bob"]}, format="json")

    assert response.status_code == 200, response.json()
    assert (response.json()["name"], response.json()["readers"], response.json()["editors"]) == (
        "Family recipes", [], ["bob", "carol"])
    owned.refresh_from_db()
    assert owned.name == "Family recipes" and set(owned.editors.values_list("username", flat=True)) == {"bob",
                                                                                                         "carol"}


def test_editor_and_reader_may_not_change_share_or_delete(client_of, other_user, carol, owned):
    for user in (carol, other_user):
        client = client_of(user)
        for response in (client.patch("/api/collections/recipes/", {"readers": [user.username]}, format="json"),
                         client.patch("/api/collections/recipes/", {"name": "Mine now"}, format="json"),
                         client.delete("/api/collections/recipes/")):
            assert response.status_code == 403
            assert response.json() == {"detail": "Only the owner of the collection 'recipes' may change or share it."}
    owned.refresh_from_db()
    assert owned.name == "Recipes" and list(owned.readers.all()) == [other_user]


def test_a_failed_share_changes_nothing(client_of, user, owned):
    response = client_of(user).patch("/api/collections/recipes/", {"name": "Renamed", "readers": ["ghost"]},
                                     format="json")

    assert response.status_code == 400 and response.json() == {"readers": [NOT_SHAREABLE_PEOPLE]}
    owned.refresh_from_db()
    assert owned.name == "Recipes"


def test_owner_deletes_with_documents(client_of, user, owned, django_user_model):
    Document.objects.create(collection=owned, source="a.md", title="A")
    stranger = client_of(django_user_model.objects.create_user(username="eve", password="eve-password-1"))

    assert stranger.delete("/api/collections/recipes/").status_code == 404
    assert client_of(user).delete("/api/collections/recipes/").status_code == 204
    assert not Collection.objects.exists() and not Document.objects.exists()
    assert client_of(user).get("/api/collections/recipes/").status_code == 404


def test_superuser_manages_every_collection(client_of, owned, django_user_model):
    root = client_of(django_user_model.objects.create_superuser(username="root", password="root-password-1"))
    assert root.get("/api/collections/recipes/").json()["can_manage"] is True
    assert root.patch("/api/collections/recipes/", {"is_public": True}, format="json").json()["is_public"] is True


def test_anonymous_is_refused(owned):
    response = APIClient().get("/api/collections/")
    assert response.status_code == 401 and "detail" in response.json()


def test_only_staff_make_a_collection_public(client_of, user, django_user_model):
    refused = client_of(user).post("/api/collections/", {"name": "Loud", "is_public": True}, format="json")
    assert refused.status_code == 403 and "Only staff may make a collection public" in refused.json()["detail"]
    mine = client_of(user).post("/api/collections/", {"name": "Quiet"}, format="json").json()
    assert client_of(user).patch(f"/api/collections/{mine['slug']}/", {"is_public": True},
                                 format="json").status_code == 403
    staff = django_user_model.objects.create_user(username="staffer", is_staff=True)
    made = client_of(staff).post("/api/collections/", {"name": "Board", "is_public": True}, format="json")
    assert made.status_code == 201 and made.json()["is_public"] is True
    Collection.objects.filter(slug="quiet").update(is_public=True)  # made public by staff
    unpublished = client_of(user).patch("/api/collections/quiet/", {"is_public": False}, format="json")
    assert unpublished.status_code == 200 and unpublished.json()["is_public"] is False


def test_changes_of_chunk_settings_are_limited_per_user(client_of, user, owned, monkeypatch,
                                                        django_capture_on_commit_callbacks):
    """Each change of the chunk settings queues every document again: a budget per user (the API
    and the settings page share it); a change of name or description costs nothing."""
    from django.core.cache import caches
    from django.test import Client

    from corpus.quotas import CollectionRebuildQuota

    monkeypatch.setattr(CollectionRebuildQuota, "rate", "2/hour")
    caches["quotas"].clear()
    Document.objects.create(collection=owned, source="a.md", title="A", status="ready")
    api = client_of(user)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        sizes = [api.patch("/api/collections/recipes/", {"chunk_size": size}, format="json").status_code
                 for size in (300, 400, 500)]
        renamed = api.patch("/api/collections/recipes/", {"name": "Renamed"}, format="json").status_code
    page = Client()
    page.force_login(user)
    form = {"name": "Renamed", "slug": "recipes", "description": "", "chunker": "markdown", "chunk_size": 600,
            "chunk_overlap": 50, "contextualization": "header", "embedding_mode": "neighbours"}
    refused = page.post("/documents/collections/recipes/edit/", form)

    assert sizes == [200, 200, 429] and renamed == 200
    assert len(callbacks) == 2  # two rebuilds of the one document queued, not three
    assert Collection.objects.get(pk=owned.pk).chunk_size == 400
    assert refused.status_code == 400 and "You changed chunk settings many times lately" in refused.content.decode()
    caches["quotas"].clear()
