"""The identity provider's endpoints, read from its discovery document
(`{OIDC_ISSUER}/.well-known/openid-configuration`) on first use and kept for DISCOVERY_TTL seconds.

Fetched lazily, not at start, so that ragweb starts (and local sign-in works) while the provider is
down; a failed fetch is not kept, the next sign-in tries again.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import requests
from django.conf import settings

DISCOVERY_TTL = 3600  # seconds; providers rotate signing keys via jwks_uri, which is read on each sign-in
REQUIRED = ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri")

_lock = threading.Lock()
_cache: dict[str, tuple[float, dict[str, Any]]] = {}


class DiscoveryError(Exception):
    """The provider's discovery document could not be read or is not usable; the message says why."""


def same_issuer(a: str, b: str) -> bool:
    """Issuers compare equal up to a trailing slash (some providers publish one, settings drop it)."""
    return a.rstrip("/") == b.rstrip("/")


def provider_metadata() -> dict[str, Any]:
    """The discovery document of settings.OIDC_ISSUER, checked: it names that issuer and every
    endpoint sign-in needs. Raises DiscoveryError."""
    issuer = settings.OIDC_ISSUER
    with _lock:
        cached = _cache.get(issuer)
    if cached and cached[0] > time.monotonic():
        return cached[1]
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT, allow_redirects=False)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as exc:
        raise DiscoveryError(f"could not read {url}: {exc}") from exc
    if not isinstance(document, dict):
        raise DiscoveryError(f"{url} is not a JSON object")
    if not same_issuer(str(document.get("issuer", "")), issuer):
        raise DiscoveryError(f"{url} names the issuer {document.get('issuer')!r}, not {issuer!r} (OIDC_ISSUER)")
    missing = [key for key in REQUIRED if not isinstance(document.get(key), str)]
    if missing:
        raise DiscoveryError(f"{url} lacks {', '.join(missing)}")
    with _lock:
        _cache[issuer] = (time.monotonic() + DISCOVERY_TTL, document)
    return document


def forget() -> None:
    """Drop the kept documents (tests; a provider that moved its endpoints)."""
    with _lock:
        _cache.clear()
