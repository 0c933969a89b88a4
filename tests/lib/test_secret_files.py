"""Secrets under var/ (lib.env.secret_file): made once, 0600 from the start, shared by settings and
scripts/services.py, so whichever starts first (plain `pytest` reads settings before it starts the
services) makes the embedded Postgres's password the other one uses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lib.env import secret_file

ROOT = Path(__file__).resolve().parents[2]
PRINT = ("import django, json; from django.conf import settings; django.setup(); "
         "print(json.dumps(settings.DATABASES['default']['PASSWORD']))")


def password_in_settings(tmp_path: Path, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    clean.update(RAGWEB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="ragweb.settings", **env)
    out = subprocess.run([sys.executable, "-c", PRINT], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_secret_is_made_once_and_private(tmp_path):
    path = tmp_path / "sub" / "secret"
    first = secret_file(path, make=lambda: "made-once\n")
    assert first == "made-once"
    assert secret_file(path, make=lambda: "made-again") == "made-once"
    assert path.stat().st_mode & 0o777 == 0o600


def test_settings_make_the_embedded_password_that_services_then_use(tmp_path):
    password = password_in_settings(tmp_path)
    assert len(password) >= 40
    assert (tmp_path / "pg_password").read_text() == password
    assert (tmp_path / "pg_password").stat().st_mode & 0o777 == 0o600
    assert password_in_settings(tmp_path) == password  # kept


def test_no_password_file_with_a_database_url(tmp_path):
    assert password_in_settings(tmp_path, DATABASE_URL="postgres://app:pw@db:5432/ragweb") == "pw"
    assert not (tmp_path / "pg_password").exists()
