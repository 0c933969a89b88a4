"""The identity provider's endpoints, read from its discovery document
(`{OIDC_ISSUER}/.well-known/openid-configuration`) on first use and kept for DISCOVERY_TTL seconds,
and what else sign-in takes from it instead of settings: the scopes to ask for and the algorithms an
ID token may be signed with.

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
# Asked of every provider: the user's id, e-mail and names (sso.services reads them).
BASE_SCOPES = ("openid", "email", "profile")
# The ID token signatures accepted: the provider's asymmetric ones (keys from its jwks_uri). Never HS*
# (it would verify with the client secret) nor "none".
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")

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


def requested_scopes(document: dict[str, Any]) -> str:
    """The scopes of the authorization request: BASE_SCOPES, and "groups" when the provider lists it in
    scopes_supported (some release the groups claim only for that scope; asking one it does not know is
    an error at some providers)."""
    supported = document.get("scopes_supported")
    extra = ("groups",) if isinstance(supported, list) and "groups" in supported else ()
    return " ".join(BASE_SCOPES + extra)


def id_token_algorithms(document: dict[str, Any]) -> list[str]:
    """SIGNING_ALGORITHMS the provider says it signs ID tokens with (id_token_signing_alg_values_supported;
    when it says nothing, RS256, which OpenID Connect Discovery makes every provider support)."""
    supported = document.get("id_token_signing_alg_values_supported")
    if not isinstance(supported, list):
        supported = ["RS256"]
    return [alg for alg in SIGNING_ALGORITHMS if alg in supported]


def forget() -> None:
    """Drop the kept documents (tests; a provider that moved its endpoints)."""
    with _lock:
        _cache.clear()
