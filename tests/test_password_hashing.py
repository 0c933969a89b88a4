"""Tests hash passwords with MD5 for speed (tests/conftest.py); the application's own settings keep
Django's strong default first, so nothing outside the tests hashes with MD5."""

from __future__ import annotations

import pytest
from django.conf import global_settings, settings
from django.contrib.auth.hashers import check_password, make_password


@pytest.mark.django_db
def test_the_tests_hash_with_md5_and_still_verify_the_production_hashers(user):
    assert user.password.startswith("md5$")
    assert user.check_password("alice-password-1")
    pbkdf2 = make_password("secret", hasher="pbkdf2_sha256")
    assert pbkdf2.startswith("pbkdf2_sha256$") and check_password("secret", pbkdf2)


def test_the_application_settings_do_not_use_md5():
    import ragweb.settings as module  # the values settings.py set; override_settings does not touch them

    configured = getattr(module, "PASSWORD_HASHERS", global_settings.PASSWORD_HASHERS)
    assert "django.contrib.auth.hashers.MD5PasswordHasher" not in configured
    assert settings.PASSWORD_HASHERS == ["django.contrib.auth.hashers.MD5PasswordHasher", *configured]
