"""Groups as readers and editors on every surface that shares a collection: the collection
settings page, the admin (group names, like the username fields) and the REST API
(`reader_groups`, `editor_groups` as names, shown to managers only). Who may then do what is
tests/test_permission_matrix.py's."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from rest_framework.test import APIClient

from corpus import selectors
from corpus.models import Collection
from tests.corpus.clients import admin_collection_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def mine(user) -> Collection:
    return Collection.objects.create(slug="mine", name="Mine", owner=user)


@pytest.fixture
def teams(user) -> dict[str, Group]:
    """Four groups, each with the owner `user` in it (one shares only with groups one is in)."""
    groups = {name: Group.objects.create(name=name) for name in ("design", "ops", "sales", "Support team")}
    user.groups.add(*groups.values())
    return groups


def names(collection: Collection, field: str) -> list[str]:
    return sorted(getattr(collection, field).values_list("name", flat=True))


def test_the_owner_shares_with_groups_on_the_settings_page(user, mine, teams):
    web = Client()
    web.force_login(user)
    response = web.post("/documents/collections/mine/share/", {
        "readers": "", "editors": "", "reader_groups": "design,ops", "editor_groups": "ops,\r\nSupport team"})
    assert response.status_code == 302
    assert names(mine, "reader_groups") == ["design", "ops"]
    assert names(mine, "editor_groups") == ["Support team", "ops"]
    page = web.get("/documents/collections/mine/edit/").content.decode()
    assert 'name="reader_groups"' in page and "design, ops</textarea>" in page

    unknown = web.post("/documents/collections/mine/share/", {"reader_groups": "design, nobody", "editor_groups": ""})
    assert unknown.status_code == 400 and "one or more of these names is not one" in unknown.content.decode()
    assert names(mine, "editor_groups") == ["Support team", "ops"]  # nothing changed


def test_the_owner_shares_with_groups_in_the_admin(user, mine, teams):
    user.is_staff = True
    user.save()
    web = Client()
    web.force_login(user)
    form = admin_collection_form(mine, reader_groups="sales", editor_groups="design, ops")
    response = web.post(f"/admin/corpus/collection/{mine.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert (names(mine, "reader_groups"), names(mine, "editor_groups")) == (["sales"], ["design", "ops"])
    page = web.get(f"/admin/corpus/collection/{mine.pk}/change/").content.decode()
    assert "design, ops</textarea>" in page and "sales</textarea>" in page

    refused = web.post(f"/admin/corpus/collection/{mine.pk}/change/", {**form, "reader_groups": "ghosts"})
    assert refused.status_code == 200 and "one or more of these names is not one" in refused.content.decode()
    assert names(mine, "reader_groups") == ["sales"]


def test_the_api_shares_with_groups_by_name_and_shows_them_to_managers_only(user, other_user, mine, teams):
    owner, member = APIClient(), APIClient()
    owner.force_authenticate(user)
    member.force_authenticate(other_user)
    response = owner.patch("/api/collections/mine/", {"reader_groups": ["ops", "design", "ops"],
                                                      "editor_groups": ["sales"]}, format="json")
    assert response.status_code == 200, response.content
    assert (response.json()["reader_groups"], response.json()["editor_groups"]) == (["design", "ops"], ["sales"])
    assert (names(mine, "reader_groups"), names(mine, "editor_groups")) == (["design", "ops"], ["sales"])

    other_user.groups.add(teams["design"])
    seen = member.get("/api/collections/mine/")
    assert seen.status_code == 200
    assert (seen.json()["reader_groups"], seen.json()["editor_groups"], seen.json()["can_write"]) == (None, None,
                                                                                                     False)
    assert member.patch("/api/collections/mine/", {"reader_groups": []}, format="json").status_code == 403

    bad = owner.patch("/api/collections/mine/", {"editor_groups": ["sales", "nobody"]}, format="json")
    assert bad.status_code == 400 and bad.json() == {"editor_groups": [selectors.NOT_SHAREABLE_GROUPS]}
    made = owner.post("/api/collections/", {"name": "Shared", "reader_groups": ["ops"]}, format="json")
    assert made.status_code == 201 and made.json()["reader_groups"] == ["ops"]
    assert made.json()["editor_groups"] == []
