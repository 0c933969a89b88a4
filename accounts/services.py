"""Making, changing and revoking personal API tokens (the only writes of ApiToken)."""

from __future__ import annotations

import functools
from datetime import datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, connection, connections, router, transaction
from django.utils import timezone

import audit
from accounts.models import PREFIX_CHARS, ApiToken, hash_key, new_key
from audit.models import Action


def token_create(*, user, name: str = "token", read_only: bool = False,
                 expires: datetime | None = None, request=None) -> tuple[ApiToken, str]:
    """A new token for `user` and its key: the only time the key exists outside the client.
    Raises ValidationError (per field: name, expires) for a name that is blank or over 100
    characters once stripped or holds a NUL character, or an expiry that is not in the future. Audited ("token created",
    by the request's user; no actor without a request, e.g. the command line), never with the key."""
    name = name.strip()
    problems = {}
    if not name or len(name) > 100:
        problems["name"] = "Give the token a name of 1 to 100 characters."
    elif "\x00" in name:  # Postgres cannot store it: told here, not as the database's error page
        problems["name"] = "The name may not contain a NUL character."
    if expires is not None and expires <= timezone.now():
        problems["expires"] = "The expiry must be in the future."
    if problems:
        raise ValidationError(problems)
    key = new_key()
    with transaction.atomic():
        token = ApiToken.objects.create(user=user, name=name, key_hash=hash_key(key), prefix=key[:PREFIX_CHARS],
                                        read_only=read_only, expires=expires)
        audit.record(Action.TOKEN_CREATED, target=token, request=request, detail={
            "owner": user.get_username(), "read_only": read_only, "expires": expires})
    return token, key


def token_revoke(*, user, token_id: int, request=None) -> bool:
    """Delete one of `user`'s tokens; False when they have no token with that id. Audited
    ("token revoked", by the request's user: the owner, or staff in the admin)."""
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().filter(user=user, pk=token_id).first()
        if token is None:
            return False
        audit.record(Action.TOKEN_REVOKED, target=token, request=request,
                     detail={"owner": user.get_username()})
        token.delete()
    return True


def token_update(*, token_id: int, name: str, read_only: bool, expires: datetime | None,
                 request=None) -> ApiToken:
    """Change a token's name, read-only flag or expiry (staff, in the admin). Audited ("token
    changed", with each changed field's [before, after]: a read-only token made writable, an expiry
    removed) when something changed; the key stays as it was."""
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().select_related("user").get(pk=token_id)
        changed = {field: [getattr(token, field), value] for field, value in
                   (("name", name.strip()), ("read_only", read_only), ("expires", expires))
                   if getattr(token, field) != value}
        if changed:
            for field, (_, value) in changed.items():
                setattr(token, field, value)
            token.save(update_fields=list(changed))
            audit.record(Action.TOKEN_CHANGED, target=token, request=request,
                         detail={"owner": token.user.get_username(), **changed})
    return token


def token_for_key(key: str) -> ApiToken | None:
    """The token whose key is `key` if its user is active, or None. It may have expired: the caller
    refuses it then (ApiTokenAuthentication says so, rather than calling the key unknown)."""
    # Every API request comes here. The same read through the ORM (select_related) spent ~1 ms of
    # query building and compiling per request, most of a search's CPU outside the embedding and
    # the statements (docs/scaling.md, "Searches per second"); this is one fixed statement.
    alias = router.db_for_read(ApiToken) or DEFAULT_DB_ALIAS
    with connections[alias].cursor() as cursor:
        cursor.execute(_token_with_user_sql(), [hash_key(key)])
        row = cursor.fetchone()
    if row is None:
        return None
    token_fields, user_fields = _columns(ApiToken), _columns(get_user_model())
    token = ApiToken.from_db(alias, token_fields, row[:len(token_fields)])
    token.user = get_user_model().from_db(alias, user_fields, row[len(token_fields):])
    return token if token.user.is_active else None


def _columns(model) -> list[str]:
    return [f.attname for f in model._meta.concrete_fields]


@functools.cache
def _token_with_user_sql() -> str:
    """The token whose key_hash is the one parameter, with its user's row: every concrete field of
    both, in _columns order."""
    user_model = get_user_model()
    quote = connection.ops.quote_name
    columns = [f"t.{quote(f.column)}" for f in ApiToken._meta.concrete_fields]
    columns += [f"u.{quote(f.column)}" for f in user_model._meta.concrete_fields]
    user_id, pk = quote(ApiToken.user.field.column), quote(user_model._meta.pk.column)
    return (f"SELECT {', '.join(columns)} FROM {quote(ApiToken._meta.db_table)} t "
            f"JOIN {quote(user_model._meta.db_table)} u ON u.{pk} = t.{user_id} WHERE t.key_hash = %s")
