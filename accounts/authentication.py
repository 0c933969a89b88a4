"""DRF authentication by personal API token: `Authorization: Token KEY` or `Authorization: Bearer KEY`."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from accounts.services import token_for_key


class ApiTokenAuthentication(TokenAuthentication):
    """`Authorization: Token KEY`, the key looked up by its hash; request.auth is the ApiToken."""

    keyword = "Token"

    def authenticate_credentials(self, key: str):
        token = token_for_key(key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or expired token.")
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
