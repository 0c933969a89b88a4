"""Sign-in throttling for the login page and the admin's. Failed sign-ins are counted three ways,
and past any limit every further attempt is refused (the right password included) until the window
has passed since the last failure:

- per (username, client address; an IPv6 client's /64): LOGIN_FAILURE_LIMIT within
  LOGIN_LOCKOUT_SECONDS. Someone guessing from one place locks only themselves out: the account's
  owner, elsewhere, still signs in.
- per client address: LOGIN_FAILURE_LIMIT_PER_ADDRESS within LOGIN_LOCKOUT_SECONDS (one place
  trying many usernames).
- per username, from everywhere: ACCOUNT_LIMIT_FACTOR x LOGIN_FAILURE_LIMIT within
  ACCOUNT_WINDOW_FACTOR x LOGIN_LOCKOUT_SECONDS, a slower limit on guessing from many addresses.
  It does not apply to an address the account signed in from before (within KNOWN_ADDRESS_SECONDS),
  so an attacker elsewhere cannot lock the admin out of their usual place.

A successful sign-in clears its (username, address) count and makes the address known for the
account; the others run out with their windows (a success must not reopen the door for guessers).
Counts live in the "signin" cache (Redis, shared by every web process). When that cache cannot be
reached, sign-in is not throttled rather than refused for everyone (logged as a warning).
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
from dataclasses import dataclass

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import caches
from django.core.exceptions import ValidationError
from django.dispatch import receiver
from django.http import HttpRequest

from audit.services import client_address

logger = logging.getLogger(__name__)

# Failed sign-ins per (username, client address) and per client address within LOCKOUT_SECONDS, then
# that pair or address is refused for it: 10 is more than a person mistyping, 40 an hour far too few
# for guessing a password; 50 per address leaves room for an office behind one NAT address.
LOGIN_FAILURE_LIMIT = 10
LOGIN_FAILURE_LIMIT_PER_ADDRESS = 50
LOGIN_LOCKOUT_SECONDS = 15 * 60
# The account-wide limit, relative to the per-place one: with the defaults 100 failures an hour.
ACCOUNT_LIMIT_FACTOR = 10
ACCOUNT_WINDOW_FACTOR = 4
KNOWN_ADDRESS_SECONDS = 30 * 24 * 3600


@dataclass(frozen=True)
class _Counter:
    key: str
    limit: int
    seconds: int


def _name(username: str) -> str:
    return hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]


def _address(request: HttpRequest | None) -> str:
    """The place a sign-in comes from: the client's address (behind a proxy: the client's, not the
    proxy's, TRUSTED_PROXY_COUNT); for IPv6 its /64, because one machine is usually given a whole
    /64 and may pick a new address in it for every attempt (an IPv4-mapped address is its IPv4)."""
    address = client_address(request)
    if address is None:
        return "-"
    parsed = ipaddress.ip_address(address)
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return address


def _known_key(request: HttpRequest | None, username: str) -> str:
    return f"signin:known:{_name(username)}:{_address(request)}"


def _counters(request: HttpRequest | None, username: str) -> list[_Counter]:
    """The pair's counter first (a success clears it), then the address's and the account's."""
    name, address, window = _name(username), _address(request), LOGIN_LOCKOUT_SECONDS
    return [_Counter(f"signin:pair:{name}:{address}", LOGIN_FAILURE_LIMIT, window),
            _Counter(f"signin:addr:{address}", LOGIN_FAILURE_LIMIT_PER_ADDRESS, window),
            _Counter(f"signin:user:{name}", ACCOUNT_LIMIT_FACTOR * LOGIN_FAILURE_LIMIT,
                     ACCOUNT_WINDOW_FACTOR * window)]


def is_locked(request: HttpRequest | None, username: str) -> bool:
    """Whether sign-in as `username` from this request's address is refused for now."""
    pair, address, account = _counters(request, username)
    known = _known_key(request, username)
    try:
        values = caches["signin"].get_many([pair.key, address.key, account.key, known])
    except Exception:  # the cache (Redis) is down: do not lock everyone out
        logger.warning("sign-in throttle: the signin cache cannot be reached", exc_info=True)
        return False
    over = [counter for counter in (pair, address, account) if values.get(counter.key, 0) >= counter.limit]
    return any(counter is not account or known not in values for counter in over)


def record_failure(request: HttpRequest | None, username: str) -> None:
    cache = caches["signin"]
    try:
        for counter in _counters(request, username):
            cache.add(counter.key, 0, timeout=counter.seconds)
            cache.incr(counter.key)
            cache.touch(counter.key, timeout=counter.seconds)
    except Exception:
        logger.warning("sign-in throttle: could not count a failed sign-in", exc_info=True)


def clear_failures(request: HttpRequest | None, username: str) -> None:
    """After a successful sign-in: the (username, address) count goes, the address becomes known."""
    try:
        cache = caches["signin"]
        cache.delete(_counters(request, username)[0].key)
        cache.set(_known_key(request, username), 1, timeout=KNOWN_ADDRESS_SECONDS)
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
            minutes = max(1, round(LOGIN_LOCKOUT_SECONDS / 60))
            raise ValidationError(LOCKED_MESSAGE.format(minutes=minutes), code="locked")
        return super().clean()


class ThrottledAuthenticationForm(_Throttled, AuthenticationForm):
    """The login page's form."""


class ThrottledAdminAuthenticationForm(_Throttled, AdminAuthenticationForm):
    """The admin login page's form."""
