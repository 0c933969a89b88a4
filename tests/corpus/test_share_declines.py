"""A declined share invitation is remembered (corpus.sharing.DECLINE_COOL_OFF): its sharer cannot
send it again at once, on any surface, and the remembered "no" is never a pending invitation (the
caps, the invitee's lists, the chat page's pointer and the admin ignore it)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from corpus import permissions, sharing
from corpus.models import Collection, ShareDecline, ShareInvitation
from tests.corpus.clients import admin_collection_form, signed_in

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_share_budget_spent")]

REFUSED = ("bob declined your invitation to this collection within the last 30 days: you may not invite them to it "
           "again yet.")


def decline(person, collection: Collection) -> None:
    invitation = ShareInvitation.objects.get(user=person, collection=collection)
    response = signed_in(person).post(f"/documents/invitations/{invitation.pk}/decline/")
    assert response.status_code == 302


def test_a_declined_invitation_cannot_be_sent_again_until_the_cool_off_is_over(user, other_user, mine, client_of,
                                                                               django_user_model):
    api = client_of(user)
    assert api.patch("/api/collections/mine/", {"readers": ["bob"]}, format="json").status_code == 200
    decline(other_user, mine)
    assert ShareDecline.objects.filter(collection=mine, user=other_user, invited_by=user).count() == 1

    again = api.patch("/api/collections/mine/", {"editors": ["bob"]}, format="json")
    assert again.status_code == 400 and again.json() == {"editors": [REFUSED]}
    page = signed_in(user).post("/documents/collections/mine/share/", {"readers": "bob"})
    assert page.status_code == 400 and REFUSED in page.content.decode()
    user.is_staff = True
    user.save()
    form = admin_collection_form(mine, readers="bob")
    admin = signed_in(user).post(f"/admin/corpus/collection/{mine.pk}/change/", form, follow=True)
    assert REFUSED in admin.content.decode()
    assert not ShareInvitation.objects.exists() and not permissions.can_read_collection(other_user, mine)

    # Another of alice's collections is another question; so is a superuser's invitation (bob may ask one).
    assert api.post("/api/collections/", {"name": "Other", "readers": ["bob"]}, format="json").status_code == 201
    root = django_user_model.objects.create_superuser(username="root", password=None)
    assert client_of(root).patch("/api/collections/mine/", {"readers": ["bob"]}, format="json").status_code == 200
    decline(other_user, mine)  # declined again, this time root's

    ShareDecline.objects.filter(invited_by=user).update(declined_at=timezone.now() - sharing.DECLINE_COOL_OFF
                                                        + timedelta(minutes=1))
    assert api.patch("/api/collections/mine/", {"readers": ["bob"]}, format="json").status_code == 400
    ShareDecline.objects.filter(invited_by=user).update(declined_at=timezone.now() - sharing.DECLINE_COOL_OFF
                                                        - timedelta(minutes=1))
    assert api.patch("/api/collections/mine/", {"readers": ["bob"]}, format="json").status_code == 200
    assert ShareInvitation.objects.get(collection=mine).invited_by == user


def test_declining_twice_keeps_one_row_with_the_latest_answer(user, other_user, mine):
    for _ in range(2):
        sharing.collection_share(collection=mine, readers=[other_user], sharer=user)
        decline(other_user, mine)
        ShareDecline.objects.update(declined_at=timezone.now() - sharing.DECLINE_COOL_OFF - timedelta(days=1))
    sharing.collection_share(collection=mine, readers=[other_user], sharer=user)
    decline(other_user, mine)
    declined = ShareDecline.objects.get()
    assert timezone.now() - declined.declined_at < timedelta(minutes=1)


def test_accepting_an_invitation_later_forgets_the_decline(user, other_user, mine, django_user_model):
    sharing.collection_share(collection=mine, readers=[other_user], sharer=user)
    decline(other_user, mine)
    root = django_user_model.objects.create_superuser(username="root", password=None)
    sharing.collection_share(collection=mine, readers=[other_user], sharer=root)
    invitation = ShareInvitation.objects.get()
    assert signed_in(other_user).post(f"/documents/invitations/{invitation.pk}/accept/").status_code == 302
    assert not ShareDecline.objects.exists()
    sharing.collection_share(collection=mine, readers=[], sharer=user)  # alice takes bob off, then asks again
    sharing.collection_share(collection=mine, readers=[other_user], sharer=user)
    assert ShareInvitation.objects.get().invited_by == user


def test_a_remembered_decline_is_not_a_pending_invitation(user, other_user, carol, mine, monkeypatch):
    sharing.collection_share(collection=mine, readers=[other_user], sharer=user)
    decline(other_user, mine)
    monkeypatch.setattr(sharing, "MAX_PENDING_BY_SHARER", 1)
    monkeypatch.setattr(sharing, "MAX_PENDING_PER_PERSON", 1)
    theirs = Collection.objects.create(slug="theirs", name="Theirs", owner=user)
    sharing.collection_share(collection=theirs, readers=[other_user], sharer=user)  # the one allowed
    assert ShareInvitation.objects.filter(invited_by=user).count() == 1
    ShareInvitation.objects.all().delete()

    bob = signed_in(other_user)
    assert sharing.invitations_pending(user=other_user).count() == 0
    assert "invites you to" not in bob.get("/documents/").content.decode()
    assert "Accept or decline" not in bob.get("/").content.decode()
    api = signed_in(other_user)
    assert api.get("/api/invitations/").json()["results"] == []
    user.is_staff = True
    user.save()
    admin_page = signed_in(user).get(f"/admin/corpus/collection/{mine.pk}/change/").content.decode()
    assert "bob (read" not in admin_page
    settings_page = signed_in(user).get("/documents/collections/mine/edit/").content.decode()
    assert "bob (read)" not in settings_page
    sharing.collection_share(collection=mine, readers=[carol], sharer=user)  # bob's "no" takes no room
    assert list(ShareInvitation.objects.values_list("user__username", flat=True)) == ["carol"]
