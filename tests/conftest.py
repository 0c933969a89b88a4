"""Shared fixtures. Tests run against the real embedded Postgres + pgvector and Redis,
started by scripts/services.py (make test starts them; this makes plain `pytest` work too)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Fixtures `fake_llm` (a real OpenAI-protocol HTTP server) and `no_llm`, for chat, API and browser tests.
pytest_plugins = ["tests.chat.fake_openai"]

if not (os.environ.get("DATABASE_URL") or os.environ.get("RAGWEB_SKIP_SERVICES")):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "services.py"), "start"], check=True,
                   stdout=subprocess.DEVNULL)


@pytest.fixture(scope="session", autouse=True)
def fast_password_hashing():
    """Passwords hashed with MD5 in the tests (Django's advice for test suites): the default PBKDF2's
    million rounds cost about half a second of CPU per user created or signed in, and hundreds of tests
    do that. The production hashers stay in the list, so their hashes still verify; nothing here tests
    the hash's strength, and the settings outside the tests are unchanged."""
    from django.conf import settings
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher",
                                             *settings.PASSWORD_HASHERS]):
        yield


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="alice", password="alice-password-1")


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user(username="bob", password="bob-password-1")


@pytest.fixture
def carol(django_user_model):
    return django_user_model.objects.create_user(username="carol", password="carol-password-1")


@pytest.fixture
def dave(django_user_model):
    return django_user_model.objects.create_user(username="dave", password="dave-password-1")


@pytest.fixture
def client_of():
    """client_of(user): a DRF APIClient signed in as `user` (force_authenticate: no token, no session)."""
    from rest_framework.test import APIClient

    def signed_in(user):
        client = APIClient()
        client.force_authenticate(user)
        return client

    return signed_in


@pytest.fixture
def api(client_of, user):
    """A DRF APIClient signed in as `user` (alice). Modules that need more set-up define their own `api`."""
    return client_of(user)


@pytest.fixture
def celery_worker_process(transactional_db, settings):
    """A real `celery worker` subprocess bound to the test database and the real broker.

    Yields a handle with .proc (Popen) and .env; the worker is stopped afterwards. Tests using it
    see only committed data, hence transactional_db.
    """
    from tests.workers import start_worker, stop_worker

    handle = start_worker(settings)
    try:
        yield handle
    finally:
        stop_worker(handle)
