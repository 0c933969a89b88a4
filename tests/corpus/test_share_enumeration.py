"""Sharing must not list the accounts (corpus.sharing.share_targets): a refused name is never named,
an unknown name is refused like an inactive account (and an unknown group like a group one is not
in), one change carries at most MAX_NEW_NAMES names not on the collection yet, and such changes
draw on an hourly budget per user (corpus.quotas.ShareQuota). The page, the REST API and the admin."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from corpus import selectors, sharing
from corpus.models import Collection, ShareInvitation
from corpus.quotas import ShareQuota
from tests.corpus.clients import admin_collection_form, signed_in

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_share_budget_spent")]


def errors_on_page(html: str) -> list[str]:
    import re

    return re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', html, flags=re.S)


def test_a_refusal_names_no_one_and_does_not_tell_unknown_from_unshareable(user, other_user, mine, client_of,
                                                                          django_user_model):
    django_user_model.objects.create_user(username="gone", is_active=False)
    Group.objects.create(name="finance").user_set.add(other_user)  # exists; alice is not in it
    api = client_of(user)
    user.is_staff = True
    user.save()
    web = signed_in(user)
    for field, unknown, existing, message in (("readers", "ghost", "gone", selectors.NOT_SHAREABLE_PEOPLE),
                                              ("reader_groups", "nobody", "finance", selectors.NOT_SHAREABLE_GROUPS)):
        answers = []
        for name in (unknown, existing):
            rest = api.patch("/api/collections/mine/", {field: [name]}, format="json")
            page = web.post("/documents/collections/mine/share/", {field: name})
            admin = web.post(f"/admin/corpus/collection/{mine.pk}/change/",
                             admin_collection_form(mine, **{field: name}))
            assert (rest.status_code, page.status_code, admin.status_code) == (400, 400, 200)
            assert rest.json() == {field: [message]}
            page_errors, admin_errors = errors_on_page(page.content.decode()), errors_on_page(admin.content.decode())
            assert name not in " ".join(page_errors + admin_errors)
            answers.append((rest.json(), page_errors, admin_errors))
        assert answers[0] == answers[1]  # a name that is no account answers as one that cannot be shared with
    assert not ShareInvitation.objects.exists() and not mine.reader_groups.exists()


def test_one_change_carries_a_bounded_number_of_new_names(user, other_user, carol, mine, client_of, monkeypatch,
                                                          django_user_model):
    monkeypatch.setattr(sharing, "MAX_NEW_NAMES", 2)
    api = client_of(user)
    refused = api.patch("/api/collections/mine/", {"readers": ["bob", "carol", "x1"]}, format="json")
    assert refused.status_code == 400
    assert refused.json() == {"readers": ["At most 2 new people or groups in one change: share in steps, or with a "
                                          "group."]}
    page = signed_in(user).post("/documents/collections/mine/share/", {"readers": "a b", "editors": "c"})
    assert page.status_code == 400 and "At most 2 new people or groups" in page.content.decode()
    assert api.patch("/api/collections/mine/", {"readers": ["bob", "carol"]}, format="json").status_code == 200
    dave = django_user_model.objects.create_user(username="dave")
    # bob and carol are invited already: naming them again asks nothing new.
    assert api.patch("/api/collections/mine/", {"readers": ["bob", "carol", "dave"]}, format="json").status_code == 200
    assert set(ShareInvitation.objects.values_list("user", flat=True)) == {other_user.pk, carol.pk, dave.pk}


def test_shares_naming_someone_new_draw_on_an_hourly_budget(user, other_user, carol, mine, client_of, monkeypatch,
                                                            django_user_model):
    monkeypatch.setattr(ShareQuota, "rate", "3/hour")
    api = client_of(user)
    assert api.patch("/api/collections/mine/", {"readers": ["ghost"]}, format="json").status_code == 400
    assert api.patch("/api/collections/mine/", {"readers": ["bob"]}, format="json").status_code == 200
    for _ in range(3):  # the same names again, or a change of name only: nothing new is asked, nothing counted
        assert api.patch("/api/collections/mine/", {"readers": ["bob"], "name": "Mine"},
                         format="json").status_code == 200
    assert signed_in(user).post("/documents/collections/mine/share/", {"readers": "ghost2"}).status_code == 400

    throttled = api.patch("/api/collections/mine/", {"readers": ["bob", "carol"]}, format="json")
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) > 0
    assert "try again in" in throttled.json()["detail"]
    page = signed_in(user).post("/documents/collections/mine/share/", {"readers": "bob carol"})
    assert page.status_code == 400 and "You shared with new people or groups many times lately" in \
        page.content.decode()
    made = api.post("/api/collections/", {"name": "New", "readers": ["carol"]}, format="json")
    assert made.status_code == 429 and not Collection.objects.filter(name="New").exists()
    assert list(ShareInvitation.objects.values_list("user", flat=True)) == [other_user.pk]

    root = django_user_model.objects.create_superuser(username="root", password=None)
    for name in ("carol", "ghost3", "ghost4", "carol"):  # superusers administer the accounts: not held to it
        client_of(root).patch("/api/collections/mine/", {"editors": [name]}, format="json")
    assert client_of(root).patch("/api/collections/mine/", {"editors": ["carol"]}, format="json").status_code == 200
