"""The authentication backend for sign-in through the identity provider (mozilla-django-oidc's
code flow, with PKCE and a nonce), finding the user by issuer + `sub` (sso.services.user_sign_in)."""

from __future__ import annotations

from typing import Any

import jwt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from sso.discovery import id_token_algorithms, provider_metadata, same_issuer
from sso.services import ClaimsError, user_sign_in


class OidcBackend(OIDCAuthenticationBackend):
    """Authenticates only the sign-in callback's request; for anything else (a password form)
    it answers None, as does the whole backend while OIDC_ISSUER is unset.

    Django makes a backend object on every request of a signed-in user (to load the user), so the
    provider's endpoints are read from discovery only when a sign-in needs them."""

    def __init__(self, *args, **kwargs):  # the base reads every endpoint from settings at once
        self.UserModel = get_user_model()
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = "RS256"  # until verify_token reads the token's (the base checks it is this one)
        self.OIDC_RP_IDP_SIGN_KEY = None  # the provider's keys come from its jwks_uri

    @property
    def OIDC_OP_TOKEN_ENDPOINT(self) -> str:  # noqa: N802 (the base class's attribute name)
        return provider_metadata()["token_endpoint"]

    @property
    def OIDC_OP_USER_ENDPOINT(self) -> str:  # noqa: N802
        return provider_metadata()["userinfo_endpoint"]

    @property
    def OIDC_OP_JWKS_ENDPOINT(self) -> str:  # noqa: N802
        return provider_metadata()["jwks_uri"]

    def verify_token(self, token: str, **kwargs):
        """The base verifies the signature with the algorithm it is told; that is the token's own, when it
        is one of the provider's (discovery) and an asymmetric one: an HS256 token signed with anything
        else, or "none", is refused before any key is looked at."""
        try:
            algorithm = jwt.get_unverified_header(token).get("alg")
        except jwt.InvalidTokenError as exc:
            raise SuspiciousOperation(f"the ID token is not a JWT: {exc}") from exc
        allowed = id_token_algorithms(provider_metadata())
        if algorithm not in allowed:
            raise SuspiciousOperation(f"ID token signed with {algorithm!r}; accepted: {', '.join(allowed)}")
        self.OIDC_RP_SIGN_ALGO = algorithm
        return super().verify_token(token, **kwargs)

    def authenticate(self, request, **kwargs):
        # Only the callback view passes a nonce: a password form posted to a URL carrying ?code=&state=
        # must not start a token exchange.
        if not settings.OIDC_ISSUER or "nonce" not in kwargs:
            return None
        return super().authenticate(request, **kwargs)

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]):
        """The ID token must come from our issuer and for our client (the base checks neither);
        the userinfo claims must be about the same `sub`. Both sets of claims together make the
        sign-in: some providers put groups in the ID token only, others in userinfo only."""
        if not same_issuer(str(payload.get("iss", "")), settings.OIDC_ISSUER):
            raise SuspiciousOperation(f"ID token from another issuer: {payload.get('iss')!r}")
        audience = payload.get("aud")
        if settings.OIDC_RP_CLIENT_ID not in ([audience] if isinstance(audience, str) else audience or []):
            raise SuspiciousOperation("ID token for another client")
        userinfo = self.get_userinfo(access_token, id_token, payload)
        if not isinstance(userinfo, dict) or userinfo.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("userinfo is about another subject than the ID token")
        try:
            return user_sign_in(issuer=settings.OIDC_ISSUER, claims={**payload, **userinfo})
        except ClaimsError as exc:
            raise SuspiciousOperation(str(exc)) from exc
