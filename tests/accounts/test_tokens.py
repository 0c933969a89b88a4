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
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiToken
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
    _, old = token_create(user=user, expires=timezone.now() - timedelta(seconds=1))
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
    call_command("drf_create_token", user.username, "--reset", stdout=StringIO())
    assert status_with(f"Token {match.group(1)}") == 401  # --reset revoked it
    assert ApiToken.objects.filter(user=user).count() == 1


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
