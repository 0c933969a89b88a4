from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command


@pytest.mark.django_db
def test_admin_is_created_once_with_a_random_password(settings, tmp_path, monkeypatch):
    settings.VAR_DIR = tmp_path
    monkeypatch.setenv("PORT", "8123")
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    password = (tmp_path / "admin-password").read_text().strip()
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.check_password(password)
    assert len(password) >= 12 and password not in ("admin", "password")
    assert "http://127.0.0.1:8123/login/" in out.getvalue() and password in out.getvalue()

    call_command("ensure_admin", stdout=StringIO())
    assert get_user_model().objects.filter(username="admin").count() == 1
    assert get_user_model().objects.get(username="admin").check_password(password)
    assert (tmp_path / "admin-password").stat().st_mode & 0o077 == 0
