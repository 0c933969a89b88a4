"""Sharing needs consent (corpus.sharing): sharing a collection with someone new invites them; the
invitation is listed on their documents page and at /api/invitations/ with the sharer's name, and
until they accept, nothing of the collection reaches them. One shares only with groups one is in.
Web page, REST API and admin alike; every step audited. Who reaches what while invited is also in
tests/test_permission_matrix.py (the "invitee" role)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from audit.models import Action, AuditEvent
from corpus import permissions, selectors, sharing
from corpus.models import ShareInvitation
from tests.corpus.clients import admin_collection_form, signed_in

pytestmark = pytest.mark.django_db


def audited(action: str) -> list[tuple[str, dict]]:
    return list(AuditEvent.objects.filter(action=action).values_list("actor_username", "detail"))


def test_sharing_on_the_page_invites_and_the_recipient_accepts(user, other_user, mine):
    owner = signed_in(user)
    response = owner.post("/documents/collections/mine/share/", {"readers": "bob", "editors": ""})
    assert response.status_code == 302
    assert not permissions.can_read_collection(other_user, mine)  # nothing until bob says yes
    assert "bob (read)" in owner.get("/documents/collections/mine/edit/").content.decode()
    assert audited(Action.SHARING_CHANGED) == [("alice", {"invited": ["bob (read)"]})]

    bob = signed_in(other_user)
    page = bob.get("/documents/").content.decode()
    assert "<strong>alice</strong> invites you to\n        read\n        <strong>Mine</strong>" in page
    assert 'value="mine"' not in page  # not among their collections
    invitation = ShareInvitation.objects.get()
    assert bob.post(f"/documents/invitations/{invitation.pk}/accept/").status_code == 302
    assert permissions.can_read_collection(other_user, mine) and not permissions.can_write_collection(other_user, mine)
    assert list(mine.readers.all()) == [other_user] and not ShareInvitation.objects.exists()
    assert audited(Action.SHARE_ACCEPTED) == [("bob", {"role": "read", "invited_by": "alice"})]


def test_the_chat_page_a_user_lands_on_points_to_their_invitations(user, other_user, mine):
    bob = signed_in(other_user)
    assert "Accept or decline" not in bob.get("/").content.decode()
    sharing.collection_share(collection=mine, readers=[other_user], sharer=user)
    page = bob.get("/").content.decode()
    assert "<strong>alice</strong> shares <strong>Mine</strong> with you." in page
    assert '<a href="/documents/">Accept or decline on the Documents page</a>' in page


def test_declining_shares_nothing_and_is_audited(user, other_user, mine, client_of):
    sharing.collection_share(collection=mine, editors=[other_user], sharer=user)
    invitation = ShareInvitation.objects.get()
    assert invitation.role == "write"
    response = client_of(other_user).post(f"/api/invitations/{invitation.pk}/decline/")
    assert response.status_code == 200 and response.json() == {"collection": "mine", "accepted": False}
    assert not permissions.can_read_collection(other_user, mine) and not ShareInvitation.objects.exists()
    assert audited(Action.SHARE_DECLINED) == [("bob", {"role": "write", "invited_by": "alice"})]


def test_only_the_recipient_answers_an_invitation(user, other_user, carol, mine, client_of):
    sharing.collection_share(collection=mine, readers=[other_user], sharer=user)
    invitation = ShareInvitation.objects.get()
    for someone in (carol, user):  # a stranger, and even the sharer
        assert client_of(someone).post(f"/api/invitations/{invitation.pk}/accept/").status_code == 404
        assert signed_in(someone).post(f"/documents/invitations/{invitation.pk}/accept/").status_code == 404
        assert client_of(someone).get("/api/invitations/").json()["results"] == []
    assert not permissions.can_read_collection(carol, mine) and ShareInvitation.objects.count() == 1


def test_leaving_someone_out_withdraws_their_invitation_and_members_change_role_at_once(user, other_user, carol,
                                                                                     mine):
    mine.readers.add(carol)
    sharing.collection_share(collection=mine, readers=[other_user], editors=[carol], sharer=user)
    assert list(mine.editors.all()) == [carol]  # already in: promoted without an invitation
    assert list(ShareInvitation.objects.values_list("user__username", "role")) == [("bob", "read")]
    form = sharing.shares_with_invitations(mine)  # the sharing form shows bob, so saving it keeps him invited
    assert form["readers"] == [other_user] and form["editors"] == [carol]
    sharing.collection_share(collection=mine, readers=[], sharer=user)
    assert not ShareInvitation.objects.exists()
    assert audited(Action.SHARING_CHANGED)[0] == ("alice", {"withdrawn": ["bob"]})


def test_one_shares_only_with_groups_one_belongs_to(user, other_user, mine, client_of, django_user_model):
    theirs, ours = Group.objects.create(name="finance"), Group.objects.create(name="ours")
    other_user.groups.add(theirs)
    user.groups.add(ours)
    api = client_of(user)
    refused = api.patch("/api/collections/mine/", {"reader_groups": ["ours", "finance"]}, format="json")
    assert refused.status_code == 400
    assert refused.json() == {"reader_groups": [selectors.NOT_SHAREABLE_GROUPS]}
    page = signed_in(user).post("/documents/collections/mine/share/", {"editor_groups": "finance"})
    assert page.status_code == 400 and "one or more of these names is not one" in page.content.decode()
    user.is_staff = True
    user.save()
    form = admin_collection_form(mine, reader_groups="finance")
    admin = signed_in(user).post(f"/admin/corpus/collection/{mine.pk}/change/", form)
    assert admin.status_code == 200 and "one or more of these names is not one" in admin.content.decode()
    assert not mine.reader_groups.exists() and not permissions.can_read_collection(other_user, mine)

    assert api.patch("/api/collections/mine/", {"reader_groups": ["ours"]}, format="json").status_code == 200
    root = django_user_model.objects.create_superuser(username="root", password=None)
    assert client_of(root).patch("/api/collections/mine/", {"reader_groups": ["ours", "finance"]},
                                 format="json").status_code == 200  # superusers administer groups
    # A group already shared stays shared when its owner, not a member, changes something else.
    assert api.patch("/api/collections/mine/", {"editor_groups": ["ours"]}, format="json").status_code == 200
    assert sorted(mine.reader_groups.values_list("name", flat=True)) == ["finance", "ours"]


def test_sharing_in_the_admin_invites_too(user, other_user, mine):
    user.is_staff = True
    user.save()
    form = admin_collection_form(mine, readers="bob")
    web = signed_in(user)
    assert web.post(f"/admin/corpus/collection/{mine.pk}/change/", form).status_code == 302
    assert not mine.readers.exists() and ShareInvitation.objects.get().user == other_user
    page = web.get(f"/admin/corpus/collection/{mine.pk}/change/").content.decode()
    assert "bob (read, by alice)" in page and "bob</textarea>" in page  # saving again keeps the invitation
    assert web.post(f"/admin/corpus/collection/{mine.pk}/change/", form).status_code == 302
    assert ShareInvitation.objects.count() == 1


def test_invitations_are_capped_per_sharer_and_per_person(user, other_user, carol, client_of, django_user_model,
                                                          monkeypatch):
    """A sharer cannot bury someone's page under invitations, nor keep an endless list of offers:
    past a cap the share is refused, naming the field, and nothing of it changes."""
    monkeypatch.setattr(sharing, "MAX_PENDING_PER_PERSON", 2)
    monkeypatch.setattr(sharing, "MAX_PENDING_BY_SHARER", 3)
    api = client_of(user)
    for n in range(3):
        api.post("/api/collections/", {"name": f"Spam {n}", "readers": ["bob"] if n < 2 else []}, format="json")

    pestering = api.patch("/api/collections/spam-2/", {"readers": ["bob"]}, format="json")
    assert pestering.status_code == 400
    assert pestering.json()["readers"] == ["bob already has 2 of your invitations to answer."]
    assert ShareInvitation.objects.filter(user=other_user).count() == 2

    assert api.patch("/api/collections/spam-2/", {"editors": ["carol"]}, format="json").status_code == 200
    dave = django_user_model.objects.create_user(username="dave")
    too_many = api.patch("/api/collections/spam-1/", {"readers": ["bob", "dave"]}, format="json")
    assert too_many.status_code == 400 and "100" not in str(too_many.json())
    assert too_many.json()["readers"][0].startswith("You have 3 invitations at most waiting for an answer")
    assert not ShareInvitation.objects.filter(user=dave).exists()

    ShareInvitation.objects.filter(user=carol).delete()  # carol answered: room for one more
    assert api.patch("/api/collections/spam-1/", {"readers": ["bob", "dave"]}, format="json").status_code == 200
    root = django_user_model.objects.create_superuser(username="root")
    for n in range(4):  # superusers are not held to the caps
        made = client_of(root).post("/api/collections/", {"name": f"Root {n}", "readers": ["bob"]}, format="json")
        assert made.status_code == 201


def test_an_invitation_lapses_when_its_sender_may_no_longer_share(user, other_user, carol, mine, client_of):
    sharing.collection_share(collection=mine, editors=[other_user], sharer=user)
    invitation = ShareInvitation.objects.get()
    mine.owner = carol  # alice hands the collection over: her offer to bob no longer holds
    mine.save(update_fields=["owner"])
    response = client_of(other_user).post(f"/api/invitations/{invitation.pk}/accept/")
    assert response.status_code == 404 and "no longer holds" in response.json()["detail"]
    assert not permissions.can_read_collection(other_user, mine) and not ShareInvitation.objects.exists()
    assert audited(Action.SHARE_DECLINED) == [("bob", {"role": "write", "invited_by": "alice", "lapsed": True})]
    assert audited(Action.SHARE_ACCEPTED) == []


def test_an_invitation_from_a_closed_account_lapses(user, other_user, mine):
    sharing.collection_share(collection=mine, readers=[other_user], sharer=user)
    invitation = ShareInvitation.objects.get()
    user.is_active = False
    user.save(update_fields=["is_active"])
    page = signed_in(other_user).post(f"/documents/invitations/{invitation.pk}/accept/")
    assert page.status_code == 404
    assert not permissions.can_read_collection(other_user, mine) and not ShareInvitation.objects.exists()
