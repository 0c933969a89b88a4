"""Small readers for settings from environment variables that fail loudly on bad values."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str, *, environ: Mapping[str, str] = os.environ) -> str:
    return environ.get(name, default)


def env_bool(name: str, default: bool, *, environ: Mapping[str, str] = os.environ) -> bool:
    if name not in environ:
        return default
    value = environ[name].strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no, on/off), got {environ[name]!r}")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None,
            environ: Mapping[str, str] = os.environ) -> int:
    raw = environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {value}")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None, maximum: float | None = None,
              environ: Mapping[str, str] = os.environ) -> float:
    raw = environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {value}")
    return value


def env_list(name: str, default: list[str], *, environ: Mapping[str, str] = os.environ) -> list[str]:
    raw = environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name: str, default: str, *, schemes: tuple[str, ...], credentials: bool = True,
            environ: Mapping[str, str] = os.environ) -> str:
    """The URL in `name`. With credentials=False a user name or password in it is refused, and the
    message does not repeat the URL (it would put the password in a log)."""
    value = environ.get(name, default).strip()
    parsed = urlparse(value)
    if not credentials and "@" in parsed.netloc:
        raise ImproperlyConfigured(f"{name} must not hold a user name or password (user:pass@host): "
                                   "give the secret in its own setting")
    if parsed.scheme not in schemes:
        raise ImproperlyConfigured(
            f"{name} must be a URL starting with one of {', '.join(s + '://' for s in schemes)}, got {value!r}")
    if not parsed.hostname and "host=" not in parsed.query:
        raise ImproperlyConfigured(f"{name} has no host: {value!r}")
    return value


MIN_SECRET_KEY_CHARS = 50  # Django's own deployment check (security.W009) asks for 50 and 5 distinct


def checked_secret_key(key: str, *, source: str) -> str:
    """`key`, if it is a usable SECRET_KEY: at least 50 printable characters, 5 of them distinct.

    A short or empty key is refused at start, with where it came from, rather than every page failing
    (an empty key) or sessions being forgeable (a short one)."""
    hint = "generate one with: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    if not key.isprintable() or any(c.isspace() for c in key):
        raise ImproperlyConfigured(f"the secret key in {source} contains spaces or unprintable characters; {hint}")
    if len(key) < MIN_SECRET_KEY_CHARS or len(set(key)) < 5:
        raise ImproperlyConfigured(f"the secret key in {source} is too weak ({len(key)} characters; at least "
                                   f"{MIN_SECRET_KEY_CHARS}, 5 of them different); {hint}")
    return key


def read_secret_file(path) -> str:
    """The text of a key file under var/ (stripped); ImproperlyConfigured when it is not UTF-8 text."""
    try:
        return path.read_bytes().decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ImproperlyConfigured(f"{path} is not text (a damaged key file?); delete it to have a new one "
                                   "made, or write a key of 50 printable characters into it") from None


def secret_file(path: Path, *, make: Callable[[], str]) -> str:
    """The secret kept in the file `path` (stripped), made with `make()` when the file does not exist:
    0600 from the moment it exists, and O_EXCL so that two processes starting together keep one secret.

    The one way to keep a secret under var/: settings (the secret key, the embedded Postgres's password)
    and scripts/services.py (which loads this file by path, without Django's set-up) both use it."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as out:
                out.write(make())
    return read_secret_file(path)
