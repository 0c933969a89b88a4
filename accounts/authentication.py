"""DRF authentication by personal API token: `Authorization: Token KEY` or `Authorization: Bearer KEY`."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from accounts.services import token_for_key


class ApiTokenAuthentication(TokenAuthentication):
    """`Authorization: Token KEY`, the key looked up by its hash; request.auth is the ApiToken.
    An unknown key, or one whose user is inactive, is 401 "Invalid token."; an expired one is 401
    with the time it expired. What a read-only token may do is accounts.permissions.TokenScope's call."""

    keyword = "Token"

    def authenticate_credentials(self, key: str):
        token = token_for_key(key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if token.expired:
            raise exceptions.AuthenticationFailed(
                f"This token expired at {token.expires:%Y-%m-%d %H:%M} UTC; make a new one on the API tokens page.")
        token.touch()
        return token.user, token


class BearerApiTokenAuthentication(ApiTokenAuthentication):
    """The same key as an OpenAI-style key: `Authorization: Bearer KEY`."""

    keyword = "Bearer"


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = ApiTokenAuthentication
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "Authorization",
                "description": "`Token KEY`: a personal API token (the Tokens page, or manage.py drf_create_token)."}


class BearerApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = BearerApiTokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "A personal API token as the bearer key."}
