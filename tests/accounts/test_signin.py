"""Sign-in throttling on /login/ and /admin/login/, and the password change page."""

from __future__ import annotations

import pytest
from django.core.cache import caches

from accounts import signin

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_counts(monkeypatch):
    monkeypatch.setattr(signin, "LOGIN_FAILURE_LIMIT", 5)
    monkeypatch.setattr(signin, "LOGIN_FAILURE_LIMIT_PER_ADDRESS", 8)
    caches["signin"].clear()
    yield
    caches["signin"].clear()


def forget_signin_cache() -> None:
    try:
        del caches["signin"]
    except AttributeError:  # not opened in this thread yet
        pass


def login(client, path: str, username: str, password: str):
    return client.post(path, {"username": username, "password": password, "next": "/"})


@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_after_the_limit_even_the_right_password_is_refused(client, django_user_model, path):
    django_user_model.objects.create_user(username="alice", password="alice-password-1", is_staff=True)
    for _ in range(5):
        assert login(client, path, "alice", "wrong").status_code == 200
    refused = login(client, path, "Alice", "alice-password-1")
    assert refused.status_code == 200 and "Too many failed sign-ins. Wait 15 minutes" in refused.content.decode()
    assert "_auth_user_id" not in client.session
    caches["signin"].clear()  # the lockout window has passed
    assert login(client, path, "alice", "alice-password-1").status_code == 302


def test_a_success_clears_the_count(client, django_user_model, settings, monkeypatch):
    # the address's count is not cleared by a success
    monkeypatch.setattr(signin, "LOGIN_FAILURE_LIMIT_PER_ADDRESS", 20)
    django_user_model.objects.create_user(username="alice", password="alice-password-1")
    for _ in range(4):
        login(client, "/login/", "alice", "wrong")
    assert login(client, "/login/", "alice", "alice-password-1").status_code == 302
    client.logout()
    for _ in range(4):
        login(client, "/login/", "alice", "wrong")
    assert login(client, "/login/", "alice", "alice-password-1").status_code == 302


def test_one_address_trying_many_usernames_is_stopped(client, django_user_model):
    django_user_model.objects.create_user(username="alice", password="alice-password-1")
    for n in range(8):
        login(client, "/login/", f"user{n}", "wrong")
    assert "Too many failed sign-ins" in login(client, "/login/", "alice", "alice-password-1").content.decode()


def test_an_unreachable_cache_does_not_lock_everyone_out(client, django_user_model, settings):
    from django.test import override_settings

    django_user_model.objects.create_user(username="alice", password="alice-password-1")
    dead = {**settings.CACHES, "signin": {**settings.CACHES["signin"], "LOCATION": "redis://127.0.0.1:9/0"}}
    with override_settings(CACHES=dead):
        forget_signin_cache()  # reopened with the dead address
        try:
            for _ in range(6):
                login(client, "/login/", "alice", "wrong")
            assert login(client, "/login/", "alice", "alice-password-1").status_code == 302
        finally:
            forget_signin_cache()


def test_guessing_from_one_address_does_not_lock_the_owner_out_elsewhere(django_user_model):
    from django.test import Client

    django_user_model.objects.create_user(username="admin", password="admin-password-1", is_staff=True)
    attacker, owner = Client(REMOTE_ADDR="203.0.113.9"), Client(REMOTE_ADDR="198.51.100.7")
    for _ in range(6):
        login(attacker, "/admin/login/", "admin", "guess")
    assert "Too many failed sign-ins" in login(attacker, "/admin/login/", "admin", "admin-password-1").content.decode()
    assert login(owner, "/admin/login/", "admin", "admin-password-1").status_code == 302


def test_guessing_from_many_addresses_meets_the_slower_account_limit_but_not_at_a_known_address(
        django_user_model, settings, monkeypatch):
    from django.test import Client

    from accounts.signin import ACCOUNT_LIMIT_FACTOR

    monkeypatch.setattr(signin, "LOGIN_FAILURE_LIMIT_PER_ADDRESS", 1000)
    django_user_model.objects.create_user(username="admin", password="admin-password-1")
    usual = Client(REMOTE_ADDR="198.51.100.7")
    assert login(usual, "/login/", "admin", "admin-password-1").status_code == 302  # now a known address
    usual.logout()
    failures = ACCOUNT_LIMIT_FACTOR * signin.LOGIN_FAILURE_LIMIT
    for n in range(failures):  # a botnet: each address stays under the per-place limit
        login(Client(REMOTE_ADDR=f"203.0.{n // 4}.{n % 4 + 1}"), "/login/", "admin", "guess")
    newcomer = Client(REMOTE_ADDR="192.0.2.44")
    assert "Too many failed sign-ins" in login(newcomer, "/login/", "admin", "admin-password-1").content.decode()
    assert login(usual, "/login/", "admin", "admin-password-1").status_code == 302


def test_users_change_their_password_from_a_linked_page(client, django_user_model):
    alice = django_user_model.objects.create_user(username="alice", password="alice-password-1")
    client.force_login(alice)
    assert 'href="/password/"' in client.get("/").content.decode()
    wrong = client.post("/password/", {"old_password": "nope", "new_password1": "Tomato-Garden-42",
                                       "new_password2": "Tomato-Garden-42"})
    assert wrong.status_code == 200 and "old password was entered incorrectly" in wrong.content.decode()
    done = client.post("/password/", {"old_password": "alice-password-1", "new_password1": "Tomato-Garden-42",
                                      "new_password2": "Tomato-Garden-42"})
    assert done.status_code == 302 and done["Location"] == "/password/done/"
    alice.refresh_from_db()
    assert alice.check_password("Tomato-Garden-42")
    assert client.get("/password/done/").status_code == 200  # still signed in on this session
    client.logout()
    assert client.get("/password/")["Location"].startswith("/login/")


def test_an_ipv6_client_is_one_place_for_its_whole_64(django_user_model):
    """One machine has a whole /64 and may use a new address in it for every guess: the guesses of
    one /64 add up; another /64 (the owner's) still signs in."""
    from django.test import Client

    django_user_model.objects.create_user(username="admin", password="admin-password-1", is_staff=True)
    for n in range(5):
        login(Client(REMOTE_ADDR=f"2001:db8:1:2::{n + 1:x}"), "/login/", "admin", "wrong")

    refused = login(Client(REMOTE_ADDR="2001:db8:1:2:ffff::9"), "/login/", "admin", "admin-password-1")
    assert "Too many failed sign-ins" in refused.content.decode()
    assert login(Client(REMOTE_ADDR="2001:db8:1:3::1"), "/login/", "admin", "admin-password-1").status_code == 302


def test_an_ipv4_mapped_address_counts_as_its_ipv4(django_user_model):
    from django.test import Client

    django_user_model.objects.create_user(username="admin", password="admin-password-1", is_staff=True)
    for _ in range(5):
        login(Client(REMOTE_ADDR="::ffff:203.0.113.9"), "/login/", "admin", "wrong")
    refused = login(Client(REMOTE_ADDR="203.0.113.9"), "/login/", "admin", "admin-password-1")
    assert "Too many failed sign-ins" in refused.content.decode()
