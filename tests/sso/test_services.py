"""The claims → user rules of sso.services, without a provider."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from sso.models import Identity, ManagedGroup
from sso.services import ClaimsError, group_names, user_sign_in, username_base

ISSUER = "https://idp.example.org"


@pytest.mark.parametrize(("claim", "names"), [
    (["a", " b ", "a", "", 7, None, "x" * 151], ["a", "b"]),
    ("solo", ["solo"]),
    (None, []),
    ({"not": "a list"}, []),
])
def test_group_names_keep_only_usable_names(claim, names):
    assert group_names(claim) == names


@pytest.mark.parametrize(("claims", "base"), [
    ({"preferred_username": "ada.lovelace", "sub": "1"}, "ada.lovelace"),
    ({"preferred_username": "Ada Lovelace/../x", "sub": "1"}, "Ada-Lovelace-..-x"),
    ({"email": "ada@example.org", "sub": "1"}, "ada"),
    ({"preferred_username": "   ", "sub": "abc|123"}, "abc-123"),
    ({"sub": "!!!"}, "user"),
])
def test_usernames_are_safe(claims, base):
    assert username_base(claims) == base


@pytest.mark.django_db
def test_a_staff_made_group_named_by_the_claim_becomes_provider_managed():
    ops = Group.objects.create(name="ops")
    hand_made = Group.objects.create(name="hand-made")
    user = user_sign_in(issuer=ISSUER, claims={"sub": "s1", "groups": ["ops"]})
    user.groups.add(hand_made)
    assert ManagedGroup.objects.filter(group=ops).exists()
    assert not ManagedGroup.objects.filter(group=hand_made).exists()

    again = user_sign_in(issuer=ISSUER, claims={"sub": "s1", "groups": []})

    assert again.pk == user.pk
    assert list(again.groups.values_list("name", flat=True)) == ["hand-made"]


@pytest.mark.django_db
def test_the_same_sub_at_another_issuer_is_another_user():
    first = user_sign_in(issuer=ISSUER, claims={"sub": "s1", "preferred_username": "ada"})
    second = user_sign_in(issuer="https://other.example.org", claims={"sub": "s1", "preferred_username": "ada"})
    assert first.pk != second.pk and second.username == "ada-2"
    assert Identity.objects.count() == 2


@pytest.mark.django_db
def test_claims_without_a_sub_make_no_user():
    with pytest.raises(ClaimsError):
        user_sign_in(issuer=ISSUER, claims={"preferred_username": "ada"})
    assert not User.objects.exists()
