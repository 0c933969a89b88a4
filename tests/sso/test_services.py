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


@pytest.mark.django_db(transaction=True)
def test_two_parallel_first_sign_ins_of_one_person_give_one_user():
    """Both find no identity, both make a user; the second's identity clashes with the first's:
    it signs in as the first's user (its own is rolled back), never an IntegrityError (a 500)."""
    import threading
    from unittest import mock

    from django.db import connection

    from sso import services

    both_looked, real_create = threading.Barrier(2, timeout=30), services._user_create
    outcome: dict = {}

    def create_after_both_looked(base, email):
        both_looked.wait()
        return real_create(base, email)

    def sign_in(n: int) -> None:
        try:
            outcome[n] = user_sign_in(issuer=ISSUER, claims={"sub": "twin", "preferred_username": "ada",
                                                             "groups": ["ops"]}).pk
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            outcome[n] = exc
        finally:
            connection.close()

    with mock.patch.object(services, "_user_create", create_after_both_looked):
        threads = [threading.Thread(target=sign_in, args=(n,)) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert outcome[0] == outcome[1], outcome
    assert list(User.objects.values_list("username", flat=True)) == ["ada"]
    assert Identity.objects.get().user_id == outcome[0]
    assert list(User.objects.get().groups.values_list("name", flat=True)) == ["ops"]
