"""A source syncs in its owner's name: when they lose write access to its collection (taken off the
editors, out of the editor group, deactivated), it stops, paused with the reason shown on the
Sources page, the API and the admin, until someone who may write takes it over."""

from __future__ import annotations

from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone

from audit.models import Action, AuditEvent
from corpus.models import Collection
from sources import sync
from sources.models import Source

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(user, other_user, carol):
    """alice's collection, read by bob, edited by carol."""
    team = Collection.objects.create(slug="team", name="Team", owner=user)
    team.readers.add(other_user)
    team.editors.add(carol)
    return team


@pytest.fixture
def carols_source(team, carol):
    return Source.objects.create(collection=team, kind="url", url="https://docs.example.org/", schedule="daily",
                                 next_sync_at=timezone.now(), created_by=carol)


def paused(source: Source) -> str:
    source.refresh_from_db()
    return source.paused_reason


def test_taking_an_editor_off_pauses_their_sources_until_someone_takes_them_over(client_of, user, carol, team,
                                                                               carols_source, other_user):
    operator = Source.objects.create(collection=team, kind="site", url="https://docs.example.org/", schedule="daily",
                                     next_sync_at=timezone.now())
    owner = client_of(user)
    assert owner.patch("/api/collections/team/", {"editors": []}, format="json").status_code == 200
    reason = paused(carols_source)
    assert reason.startswith("Paused: carol may no longer change documents of the collection 'team'")
    assert not paused(operator)  # the operator's (no owner) is left alone
    assert list(Source.objects.due(timezone.now())) == [operator]
    event = AuditEvent.objects.get(action=Action.SOURCE_PAUSED)
    assert (event.target_id, event.detail["owner"]) == (str(carols_source.pk), "carol")
    with mock.patch.object(sync, "kind_module") as kinds:  # nothing is fetched in carol's name
        result = sync.source_sync(source_id=carols_source.pk)
    assert not kinds.called and result.error == reason

    page = Client()
    page.force_login(user)
    html = page.get("/sources/team/").content.decode()
    assert reason.replace("'", "&#x27;") in html and "Take over" in html
    assert owner.get(f"/api/sources/{carols_source.pk}/").json()["paused_reason"] == reason

    assert client_of(carol).post(f"/api/sources/{carols_source.pk}/take-over/").status_code == 404
    assert client_of(other_user).post(f"/api/sources/{carols_source.pk}/take-over/").status_code == 403
    taken = owner.post(f"/api/sources/{carols_source.pk}/take-over/")
    assert taken.status_code == 200 and (taken.json()["created_by"], taken.json()["paused_reason"]) == ("alice", "")
    assert carols_source in Source.objects.due(timezone.now())
    assert AuditEvent.objects.get(action=Action.SOURCE_TAKEN_OVER).detail == {"from": "carol", "was_paused": True}


def test_leaving_the_editor_group_pauses_the_members_sources(team, django_user_model):
    gus = django_user_model.objects.create_user(username="gus")
    editors = Group.objects.create(name="editors")
    gus.groups.add(editors)
    team.editor_groups.add(editors)
    source = Source.objects.create(collection=team, kind="url", url="https://gus.example.org/", created_by=gus)
    gus.groups.remove(editors)
    assert paused(source).startswith("Paused: gus")


def test_a_deactivated_owner_is_found_before_the_sync_even_without_a_signal(team, carol, carols_source):
    get_user_model().objects.filter(pk=carol.pk).update(is_active=False)  # no signal sent
    assert not paused(carols_source)
    with mock.patch.object(sync, "kind_module") as kinds:
        result = sync.source_sync(source_id=carols_source.pk)
    assert not kinds.called and result.error.startswith("Paused: carol")
    assert paused(carols_source) == result.error


def test_the_page_and_the_admin_take_over(client, user, carol, team, carols_source):
    team.editors.remove(carol)
    user.is_staff = True
    user.save()
    client.force_login(user)
    assert client.post(f"/sources/source/{carols_source.pk}/take-over/").status_code == 302
    assert not paused(carols_source) and carols_source.created_by == user
    team.editors.add(carol)
    Source.objects.filter(pk=carols_source.pk).update(created_by=carol)
    team.editors.remove(carol)
    assert paused(carols_source)
    client.post("/admin/sources/source/", {"action": "take_over", "_selected_action": [carols_source.pk]})
    assert not paused(carols_source) and carols_source.created_by == user
