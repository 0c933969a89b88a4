"""Sign-in throttling for the login page and the admin's: after LOGIN_FAILURE_LIMIT failed
sign-ins for one username, or LOGIN_FAILURE_LIMIT_PER_ADDRESS from one client address, within
LOGIN_LOCKOUT_SECONDS, every further attempt is refused (the right password included) until that
window has passed since the last failure. A successful sign-in clears the username's count.

Counts live in the "signin" cache (Redis, shared by every web process). When that cache cannot be
reached, sign-in is not throttled rather than refused for everyone (logged as a warning).
"""

from __future__ import annotations

import hashlib
import logging

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import caches
from django.core.exceptions import ValidationError
from django.dispatch import receiver
from django.http import HttpRequest

from audit.services import client_address

logger = logging.getLogger(__name__)


def _keys(request: HttpRequest | None, username: str) -> list[tuple[str, int]]:
    """(cache key, limit) for the username and the client address."""
    name = hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]
    keys = [(f"signin:user:{name}", settings.LOGIN_FAILURE_LIMIT)]
    address = client_address(request)  # behind a proxy: the client's, not the proxy's (TRUSTED_PROXY_COUNT)
    if address:
        keys.append((f"signin:addr:{address}", settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS))
    return keys


def is_locked(request: HttpRequest | None, username: str) -> bool:
    """Whether sign-in as `username` from this request's address is refused for now."""
    try:
        counts = caches["signin"].get_many([key for key, _ in _keys(request, username)])
    except Exception:  # the cache (Redis) is down: do not lock everyone out
        logger.warning("sign-in throttle: the signin cache cannot be reached", exc_info=True)
        return False
    return any(counts.get(key, 0) >= limit for key, limit in _keys(request, username))


def record_failure(request: HttpRequest | None, username: str) -> None:
    cache = caches["signin"]
    try:
        for key, _ in _keys(request, username):
            cache.add(key, 0, timeout=settings.LOGIN_LOCKOUT_SECONDS)
            cache.incr(key)
            cache.touch(key, timeout=settings.LOGIN_LOCKOUT_SECONDS)
    except Exception:
        logger.warning("sign-in throttle: could not count a failed sign-in", exc_info=True)


def clear_failures(request: HttpRequest | None, username: str) -> None:
    try:
        caches["signin"].delete(_keys(request, username)[0][0])
    except Exception:
        logger.warning("sign-in throttle: could not clear the count", exc_info=True)


@receiver(user_login_failed)
def _on_failure(sender, credentials, request=None, **kwargs) -> None:
    record_failure(request, str(credentials.get("username", "")))


@receiver(user_logged_in)
def _on_success(sender, request, user, **kwargs) -> None:
    clear_failures(request, user.get_username())


LOCKED_MESSAGE = "Too many failed sign-ins. Wait {minutes} minutes, then try again."


class _Throttled:
    """Refuses a locked username or address before the password is even checked."""

    def clean(self):
        username = self.data.get("username", "") or ""
        if is_locked(self.request, username):
            minutes = max(1, round(settings.LOGIN_LOCKOUT_SECONDS / 60))
            raise ValidationError(LOCKED_MESSAGE.format(minutes=minutes), code="locked")
        return super().clean()


class ThrottledAuthenticationForm(_Throttled, AuthenticationForm):
    """The login page's form."""


class ThrottledAdminAuthenticationForm(_Throttled, AdminAuthenticationForm):
    """The admin login page's form."""
