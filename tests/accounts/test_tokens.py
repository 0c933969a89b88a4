"""Personal API tokens: stored hashed, accepted as `Token KEY` and `Bearer KEY`, revocable, expiring;
DRF's plain keys moved over by a migration; `manage.py drf_create_token`; the Tokens page."""

from __future__ import annotations

import hashlib
import importlib
import re
from datetime import timedelta
from io import StringIO

import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import LAST_USED_EVERY, ApiToken
from accounts.services import token_create

pytestmark = pytest.mark.django_db


def status_with(header: str) -> int:
    return APIClient(HTTP_AUTHORIZATION=header).get("/api/collections/").status_code


def test_it_stores_only_a_hash_of_the_key(user):
    token, key = token_create(user=user, name="laptop")
    stored = ApiToken.objects.get(pk=token.pk)
    assert stored.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert key not in {str(v) for v in ApiToken.objects.values_list(flat=False).get(pk=token.pk)}
    assert stored.prefix == key[:8] and len(key) > 30


def test_it_accepts_the_key_as_token_and_as_bearer_and_records_the_use(user):
    token, key = token_create(user=user)
    assert status_with(f"Token {key}") == 200
    assert status_with(f"Bearer {key}") == 200
    assert ApiToken.objects.get(pk=token.pk).last_used is not None
    assert status_with(f"Token {key}x") == 401
    assert status_with(f"Bearer {token.key_hash}") == 401  # the stored hash is no key


def test_it_refuses_revoked_and_expired_tokens(user, other_user):
    token, key = token_create(user=user)
    expired, old = token_create(user=user, expires=timezone.now() + timedelta(seconds=60))
    ApiToken.objects.filter(pk=expired.pk).update(expires=timezone.now() - timedelta(seconds=1))
    assert status_with(f"Token {old}") == 401
    from accounts.services import token_revoke

    assert not token_revoke(user=other_user, token_id=token.pk)  # not theirs
    assert status_with(f"Token {key}") == 200
    assert token_revoke(user=user, token_id=token.pk)
    assert status_with(f"Token {key}") == 401


def test_the_migration_hashes_drf_plain_keys_so_clients_keep_working(user):
    key = "0123456789abcdef0123456789abcdef01234567"  # a DRF authtoken key
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamptz NOT NULL, "
                       "user_id bigint NOT NULL)")
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, now(), %s)", [key, user.pk])
    migration = importlib.import_module("accounts.migrations.0002_hash_plain_tokens")
    with connection.schema_editor() as editor:
        migration.hash_plain_tokens(django_apps, editor)
    assert "authtoken_token" not in connection.introspection.table_names()  # no plain key left
    assert ApiToken.objects.get(user=user).prefix == key[:8]
    assert status_with(f"Token {key}") == 200
    assert status_with(f"Bearer {key}") == 200


def test_drf_create_token_prints_a_working_key(user):
    out = StringIO()
    call_command("drf_create_token", user.username, stdout=out)
    match = re.fullmatch(r"Generated token (\S+) for user alice\n", out.getvalue())
    assert match, out.getvalue()
    assert status_with(f"Token {match.group(1)}") == 200
    first = ApiToken.objects.get(user=user)
    call_command("drf_create_token", user.username, "--reset", stdout=StringIO())
    assert status_with(f"Token {match.group(1)}") == 401  # --reset revoked it
    assert ApiToken.objects.filter(user=user).count() == 1
    from audit.models import Action, AuditEvent

    revoked = AuditEvent.objects.filter(action=Action.TOKEN_REVOKED).values_list("target_id", "detail")
    assert list(revoked) == [(str(first.pk), {"owner": "alice"})]  # --reset is audited


def test_a_user_rotates_their_token_on_the_tokens_page(user, other_user):
    browser = Client()
    browser.force_login(user)
    old, old_key = token_create(user=user, name="old")
    theirs, _ = token_create(user=other_user, name="theirs")
    page = browser.get("/account/tokens/").content.decode()
    assert "old" in page and old.prefix in page and old_key not in page and "theirs" not in page

    made = browser.post("/account/tokens/", {"name": "new laptop"})
    assert made.status_code == 201
    new_key = re.search(r'<code id="new-key">([^<]+)</code>', made.content.decode()).group(1)
    assert status_with(f"Token {new_key}") == 200

    assert browser.post(f"/account/tokens/{old.pk}/revoke/").status_code == 302
    assert status_with(f"Token {old_key}") == 401
    browser.post(f"/account/tokens/{theirs.pk}/revoke/")
    assert ApiToken.objects.filter(pk=theirs.pk).exists()  # someone else's token stays
    assert browser.post("/account/tokens/", {"name": ""}).status_code == 302  # refused, with a message
    assert ApiToken.objects.filter(user=user).count() == 1


# --- /api/tokens/ ------------------------------------------------------------------------------------

def session_api(user) -> APIClient:
    api = APIClient()
    api.force_login(user)  # a real session (CSRF enforced as for a browser)
    return api


def test_the_api_lists_the_callers_tokens_without_keys_or_hashes(user, other_user):
    mine, key = token_create(user=user, name="laptop", read_only=True)
    token_create(user=other_user, name="theirs")
    response = APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/tokens/")
    assert response.status_code == 200
    assert response.json()["count"] == 1
    [listed] = response.json()["results"]
    assert set(listed) == {"id", "name", "prefix", "read_only", "created", "last_used", "expires"}
    assert (listed["id"], listed["name"], listed["prefix"], listed["read_only"]) == (mine.pk, "laptop",
                                                                                      mine.prefix, True)
    assert key not in response.content.decode() and mine.key_hash not in response.content.decode()


def test_the_api_makes_a_token_whose_key_is_shown_once_and_works(user):
    _, key = token_create(user=user, name="admin script")
    api = APIClient(HTTP_AUTHORIZATION=f"Bearer {key}")
    response = api.post("/api/tokens/", {"name": " ci ", "read_only": True, "expires": "2999-05-01T12:00:00Z"},
                        format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["name"], body["read_only"], body["expires"]) == ("ci", True, "2999-05-01T12:00:00Z")
    made = ApiToken.objects.get(pk=body["id"])
    assert made.key_hash == hashlib.sha256(body["key"].encode()).hexdigest() and made.read_only
    assert status_with(f"Token {body['key']}") == 200
    assert body["key"] not in api.get("/api/tokens/").content.decode()


@pytest.mark.parametrize(("data", "field"), [
    ({"name": ""}, "name"), ({"name": "  "}, "name"), ({"name": "x" * 101}, "name"), ({}, "name"),
    ({"name": "a", "expires": "2001-01-01T00:00:00Z"}, "expires"), ({"name": "a", "expires": "soon"}, "expires"),
    ({"name": "a", "read_only": "maybe"}, "read_only"), ({"name": "a", "key": "mine"}, "non_field_errors"),
    ({"name": "lap\x00top"}, "name"),
])
def test_the_api_refuses_bad_token_input_with_a_message(user, data, field):
    response = session_api(user).post("/api/tokens/", data, format="json")
    assert response.status_code == 400 and response.json()[field], response.content
    assert not ApiToken.objects.filter(user=user).exists()


def test_the_api_revokes_only_the_callers_own_tokens(user, other_user):
    mine, key = token_create(user=user, name="old")
    theirs, their_key = token_create(user=other_user, name="theirs")
    api = session_api(user)
    assert api.delete(f"/api/tokens/{theirs.pk}/").status_code == 404
    assert status_with(f"Token {their_key}") == 200
    assert api.delete(f"/api/tokens/{mine.pk}/").status_code == 204
    assert status_with(f"Token {key}") == 401
    assert api.delete(f"/api/tokens/{mine.pk}/").status_code == 404
    assert APIClient().get("/api/tokens/").status_code == 401


def test_a_read_only_token_may_neither_make_nor_revoke_tokens(user):
    _, key = token_create(user=user, name="reader", read_only=True)
    other, other_key = token_create(user=user, name="other")
    api = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
    made = api.post("/api/tokens/", {"name": "escalate"}, format="json")
    assert made.status_code == 403 and "read-only" in made.json()["detail"]
    revoked = api.delete(f"/api/tokens/{other.pk}/")
    assert revoked.status_code == 403 and "read-only" in revoked.json()["detail"]
    assert ApiToken.objects.filter(user=user).count() == 2
    assert api.get("/api/tokens/").status_code == 200


def test_an_expired_token_is_refused_with_a_clear_message(user):
    _, key = token_create(user=user, expires=timezone.now() + timedelta(hours=1))
    ApiToken.objects.filter(user=user).update(expires=timezone.now() - timedelta(minutes=1))
    for header in (f"Token {key}", f"Bearer {key}"):
        response = APIClient(HTTP_AUTHORIZATION=header).get("/api/collections/")
        assert response.status_code == 401
        assert response.json()["detail"].startswith("This token expired at ")
        assert "make a new one" in response.json()["detail"]
    assert APIClient(HTTP_AUTHORIZATION="Token rw_nosuchkey").get("/api/tokens/").json()["detail"] == "Invalid token."


def test_the_tokens_page_makes_read_only_and_expiring_tokens_and_shows_last_use(user):
    browser = Client()
    browser.force_login(user)
    made = browser.post("/account/tokens/", {"name": "ci", "read_only": "on", "expires_in_days": "30"})
    assert made.status_code == 201
    token = ApiToken.objects.get(user=user)
    assert token.read_only and timedelta(days=29, hours=23) < token.expires - timezone.now() <= timedelta(days=30)
    page = browser.get("/account/tokens/").content.decode()
    assert '<td data-label="Access">read-only</td>' in page
    assert re.findall(r'<td class="last-used"[^>]*>([^<]*)</td>', page) == ["never"]
    key = re.search(r'<code id="new-key">([^<]+)</code>', made.content.decode()).group(1)
    assert status_with(f"Token {key}") == 200
    page = browser.get("/account/tokens/").content.decode()
    used = ApiToken.objects.get(user=user).last_used
    assert re.findall(r'<td class="last-used"[^>]*>([^<]*)</td>', page) == [used.strftime("%Y-%m-%d %H:%M")]

    for bad in ("0", "-1", "abc", "99999", "1" * 5000):
        response = browser.post("/account/tokens/", {"name": "x", "expires_in_days": bad}, follow=True)
        assert "whole number of days" in response.content.decode()
    plain = browser.post("/account/tokens/", {"name": "plain"})
    assert plain.status_code == 201
    assert not ApiToken.objects.get(name="plain").read_only and ApiToken.objects.get(name="plain").expires is None
    assert ApiToken.objects.filter(user=user).count() == 2
    ApiToken.objects.filter(name="ci").update(expires=timezone.now() - timedelta(days=1))
    page = browser.get("/account/tokens/").content.decode()
    assert page.count('<td data-label="Expires">expired ') == 1
    assert '<td data-label="Expires">never</td>' in page  # "plain" never expires


def test_a_token_used_twice_within_a_minute_is_written_once_and_again_after_it(user):
    token, key = token_create(user=user)

    def writes() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert status_with(f"Token {key}") == 200
        return sum("UPDATE" in q["sql"] and "accounts_apitoken" in q["sql"] for q in captured.captured_queries)

    assert writes() == 1  # the first use
    first = ApiToken.objects.get(pk=token.pk).last_used
    assert writes() == 0  # within LAST_USED_EVERY: no write
    assert ApiToken.objects.get(pk=token.pk).last_used == first
    ApiToken.objects.filter(pk=token.pk).update(last_used=timezone.now() - LAST_USED_EVERY)
    assert writes() == 1  # a minute later it is recorded again
    assert ApiToken.objects.get(pk=token.pk).last_used > first


def test_an_inactive_users_token_is_refused(user):
    _, key = token_create(user=user)
    assert status_with(f"Token {key}") == 200
    type(user).objects.filter(pk=user.pk).update(is_active=False)
    assert status_with(f"Token {key}") == 401


def test_token_for_key_reads_the_token_and_its_user_as_the_orm_does(user):
    from accounts.services import token_for_key

    token, key = token_create(user=user, name="ci", read_only=True, expires=timezone.now() + timedelta(days=3))
    found = token_for_key(key)
    expected = ApiToken.objects.select_related("user").get(pk=token.pk)
    fields = [f.attname for f in ApiToken._meta.concrete_fields]
    user_fields = [f.attname for f in type(user)._meta.concrete_fields]
    assert [getattr(found, f) for f in fields] == [getattr(expected, f) for f in fields]
    assert [getattr(found.user, f) for f in user_fields] == [getattr(expected.user, f) for f in user_fields]
    assert found.read_only is True and found.expires == expected.expires and found.user.pk == user.pk
    assert not found._state.adding and found._state.db == "default"
    with CaptureQueriesContext(connection) as captured:
        assert found.user.get_username() == user.get_username()
    assert not captured.captured_queries  # the user came with the token
    assert token_for_key(key + "x") is None


def test_a_name_with_a_nul_character_is_refused_with_a_message_on_the_page(user):
    browser = Client()
    browser.force_login(user)
    refused = browser.post("/account/tokens/", {"name": "lap\x00top"}, follow=True)
    assert refused.status_code == 200 and "The name may not contain a NUL character." in refused.content.decode()
    assert not ApiToken.objects.filter(user=user).exists()
