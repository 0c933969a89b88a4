"""The sign-in settings: without OIDC nothing changes; LOCAL_LOGIN=0 refuses every password;
bad OIDC_* values stop the start with a message."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.contrib.auth.models import User

from tests.sso import provider as idp

pytestmark = pytest.mark.django_db
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_without_oidc_the_login_page_and_backends_are_as_before(client, user, settings):
    assert settings.OIDC_ISSUER == ""
    assert "form-action 'self';" in settings.CONTENT_SECURITY_POLICY
    assert settings.AUTHENTICATION_BACKENDS == ["django.contrib.auth.backends.ModelBackend"]
    page = client.get("/login/").content.decode()
    assert 'name="password"' in page and "Sign in with" not in page
    assert client.get("/oidc/authenticate/").status_code == 404
    assert client.get("/oidc/callback/?code=x&state=y").status_code == 404

    response = client.post("/login/", {"username": "alice", "password": "alice-password-1"})

    assert response.status_code == 302 and client.get("/").status_code == 200
    assert client.post("/logout/")["Location"] == "/login/"


def test_with_oidc_the_login_page_offers_both_and_passwords_still_work(client, user, settings):
    idp.use(settings, idp.Provider("http://127.0.0.1:9", None, None))
    page = client.get("/login/?next=/documents/").content.decode()
    assert 'href="/oidc/authenticate/?next=/documents/">Sign in with single sign-on</a>' in page
    assert 'name="password"' in page

    response = client.post("/login/", {"username": "alice", "password": "alice-password-1"})

    assert response.status_code == 302 and client.get("/").status_code == 200


@pytest.fixture
def local_login_off(settings):
    idp.use(settings, idp.Provider("http://127.0.0.1:9", None, None), LOCAL_LOGIN=False,
            AUTHENTICATION_BACKENDS=["sso.backend.OidcBackend"])


def test_local_login_off_shows_only_the_provider_and_refuses_the_password_post(client, user, local_login_off):
    page = client.get("/login/").content.decode()
    assert "Sign in with single sign-on" in page and 'name="password"' not in page

    response = client.post("/login/", {"username": "alice", "password": "alice-password-1"})

    assert response.status_code == 403
    assert "Password sign-in is switched off here: sign in with single sign-on." in response.content.decode()
    assert client.get("/").status_code == 302


def test_local_login_off_refuses_the_admins_password_form_too(client, local_login_off):
    User.objects.create_superuser("root", password="root-password-1")

    response = client.post("/admin/login/?next=/admin/", {"username": "root", "password": "root-password-1"})

    assert response.status_code == 302 and response["Location"] == "/login/?next=/admin/"
    assert client.get("/admin/").status_code == 302  # not signed in
    # Even a password form reaching Django's authenticate() finds no backend that checks passwords.
    from django.contrib.auth import authenticate
    assert authenticate(username="root", password="root-password-1") is None


def test_with_sso_the_admin_signs_in_on_the_login_page(client, settings):
    idp.use(settings, idp.Provider("http://127.0.0.1:9", None, None))
    assert client.get("/admin/")["Location"] == "/admin/login/?next=/admin/"
    assert client.get("/admin/login/?next=/admin/")["Location"] == "/login/?next=/admin/"


def test_without_sso_the_admin_login_form_is_django_s(client):
    response = client.get("/admin/login/?next=/admin/")
    assert response.status_code == 200 and b'id="login-form"' in response.content


def settings_with(**env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OIDC_") and k != "LOCAL_LOGIN"}
    code = ("import ragweb.settings as s; print(s.AUTHENTICATION_BACKENDS, s.OIDC_ISSUER); "
            "print(s.CONTENT_SECURITY_POLICY)")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**clean, **env}, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize(("env", "message"), [
    ({"LOCAL_LOGIN": "0"}, "LOCAL_LOGIN=0 needs single sign-on (OIDC_ISSUER)"),
    ({"LOCAL_LOGIN": "maybe"}, "LOCAL_LOGIN must be a boolean"),
    ({"OIDC_ISSUER": "https://idp.example.org"}, "OIDC_CLIENT_ID and OIDC_CLIENT_SECRET must be set"),
    ({"OIDC_ISSUER": "http://idp.example.org", "OIDC_CLIENT_ID": "a", "OIDC_CLIENT_SECRET": "b"},
     "OIDC_ISSUER must be https://"),
    ({"OIDC_ISSUER": "idp.example.org", "OIDC_CLIENT_ID": "a", "OIDC_CLIENT_SECRET": "b"},
     "OIDC_ISSUER must be a URL"),
])
def test_bad_sign_in_settings_stop_the_start_with_a_message(env, message):
    result = settings_with(**env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and message in result.stderr


def test_oidc_settings_from_the_environment():
    result = settings_with(OIDC_ISSUER="https://idp.example.org/realms/team/", OIDC_CLIENT_ID="ragweb",
                           OIDC_CLIENT_SECRET="secret", LOCAL_LOGIN="0")
    assert result.returncode == 0, result.stderr
    first, policy = result.stdout.strip().split("\n")
    assert first == "['sso.backend.OidcBackend'] https://idp.example.org/realms/team"
    assert "; form-action 'self' https://idp.example.org;" in policy  # sign-out is redirected there
