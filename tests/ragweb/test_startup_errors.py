"""A bad secret key or an unreachable database stops `manage.py` (and so `make run`) at once, with one
line that says what is wrong, instead of a running site where every page is a 500 or a screen of
stacked tracebacks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def manage(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    clean.update(RAGWEB_VAR_DIR=str(tmp_path), RAGWEB_SKIP_SERVICES="1", **env)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=clean, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("content", [b"", b"\xff\xfe\x00\x81garbage", b"abc", b"a" * 60, b"has a space" * 6])
def test_a_bad_secret_key_file_stops_the_start_with_one_line(tmp_path, content):
    (tmp_path / "secret_key").write_bytes(content)
    out = manage(tmp_path, "check")
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1, out.stderr
    assert str(tmp_path / "secret_key") in out.stderr and "Traceback" not in out.stderr


def test_a_weak_secret_key_setting_is_refused(tmp_path):
    out = manage(tmp_path, "check", SECRET_KEY="three")
    assert out.returncode == 1
    assert "the secret key in SECRET_KEY is too weak (5 characters" in out.stderr


def test_a_good_key_file_is_used(tmp_path):
    (tmp_path / "secret_key").write_text("k" * 25 + "abcdefghij" * 3 + "\n")
    out = manage(tmp_path, "check")
    assert out.returncode == 0, out.stderr


def test_a_dead_database_url_is_one_clear_line(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the probe is closed
    out = manage(tmp_path, "migrate", "--noinput", DATABASE_URL=f"postgres://ragweb:x@127.0.0.1:{port}/ragweb")
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1, out.stderr
    assert "ragweb: cannot use the database:" in out.stderr and str(port) in out.stderr
    assert "DATABASE_URL" in out.stderr
