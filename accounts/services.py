"""Making and revoking personal API tokens (the only writes of ApiToken)."""

from __future__ import annotations

from datetime import datetime

from accounts.models import PREFIX_CHARS, ApiToken, hash_key, new_key


def token_create(*, user, name: str = "token", read_only: bool = False,
                 expires: datetime | None = None) -> tuple[ApiToken, str]:
    """A new token for `user` and its key: the only time the key exists outside the client."""
    key = new_key()
    token = ApiToken.objects.create(user=user, name=name.strip()[:100] or "token", key_hash=hash_key(key),
                                    prefix=key[:PREFIX_CHARS], read_only=read_only, expires=expires)
    return token, key


def token_revoke(*, user, token_id: int) -> bool:
    """Delete one of `user`'s tokens; False when they have no token with that id."""
    deleted, _ = ApiToken.objects.filter(user=user, pk=token_id).delete()
    return bool(deleted)


def token_for_key(key: str) -> ApiToken | None:
    """The usable token (not expired, its user active) whose key is `key`, or None."""
    return ApiToken.objects.usable().select_related("user").filter(key_hash=hash_key(key)).first()
