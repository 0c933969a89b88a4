"""Sign-in through the identity provider: the ragweb user behind a set of claims, made on first
sign-in, with its groups (and, when OIDC_STAFF_GROUP says so, its staff flag) set from the claims
on every sign-in. The claims read are the common ones (Keycloak, Authentik, Okta, Dex and Entra ID
all send `groups`), not settings."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group
from django.db import IntegrityError, transaction

from sso.models import Identity, ManagedGroup

logger = logging.getLogger(__name__)

MAX_GROUPS = 500  # a claim listing more is cut (and logged): a bound on the rows one sign-in writes
USERNAME_MAX = 150  # django.contrib.auth's username length
GROUPS_CLAIM = "groups"  # the user's groups, from the ID token or userinfo
USERNAME_CLAIM = "preferred_username"  # a new user's name; else the e-mail's local part, else `sub`
_UNSAFE = re.compile(r"[^\w.@+-]+")  # what Django's username validator refuses


class ClaimsError(ValueError):
    """The claims cannot make a sign-in (no usable `sub`)."""


def group_names(value: Any) -> list[str]:
    """The group names in a groups claim: a list of strings (or one string), each stripped, 1-150
    characters (a Django group name), duplicates dropped; anything else in it is ignored."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    names = list(dict.fromkeys(v.strip() for v in value if isinstance(v, str) and 0 < len(v.strip()) <= 150))
    if len(names) > MAX_GROUPS:
        logger.warning("sso: the groups claim names %s groups; only the first %s are used", len(names), MAX_GROUPS)
    return names[:MAX_GROUPS]


def username_base(claims: Mapping[str, Any]) -> str:
    """A safe username from the claims: USERNAME_CLAIM, else the e-mail's local part, else `sub`;
    characters Django refuses become "-", cut to leave room for a "-N" suffix."""
    for raw in (claims.get(USERNAME_CLAIM), str(claims.get("email") or "").partition("@")[0],
                claims.get("sub")):
        if isinstance(raw, str):
            name = _UNSAFE.sub("-", raw.strip()).strip("-.")[: USERNAME_MAX - 8]
            if name:
                return name
    return "user"


def _user_create(base: str, email: str) -> AbstractUser:
    """A new user named `base`, or `base-2`, `base-3`... when that name is taken (by anyone)."""
    users = get_user_model().objects
    for n in range(1, 1000):
        name = base if n == 1 else f"{base}-{n}"
        if users.filter(username__iexact=name).exists():
            continue
        try:
            with transaction.atomic():  # a savepoint: a concurrent sign-in may take the name first
                return users.create_user(username=name, email=email, password=None)
        except IntegrityError:
            continue
    raise ClaimsError(f"no free username near {base!r}")


def groups_sync(*, user: AbstractUser, names: list[str]) -> None:
    """Put `user` in exactly the provider-managed groups named, creating (and marking) them as needed.

    Groups the provider never named (made by staff) keep their members: sign-in neither adds nor
    removes anyone there. A staff-made group becomes provider-managed once the claim names it."""
    wanted = []
    for name in names:
        group, _ = Group.objects.get_or_create(name=name)
        ManagedGroup.objects.get_or_create(group=group)
        wanted.append(group.pk)
    stale = user.groups.filter(sso_managed__isnull=False).exclude(pk__in=wanted)
    user.groups.remove(*stale)
    user.groups.add(*wanted)


def _identity_user(issuer: str, subject: str, claims: Mapping[str, Any], email: str) -> AbstractUser:
    """The user of the identity (issuer, subject), its row locked and its last sign-in recorded;
    made with a new user on the first sign-in."""
    identity = Identity.objects.select_for_update().select_related("user").filter(
        issuer=issuer, subject=subject).first()
    if identity is None:
        try:
            with transaction.atomic():  # a savepoint: the new user goes too if the identity cannot be made
                user = _user_create(username_base(claims), email)
                identity = Identity.objects.create(user=user, issuer=issuer, subject=subject)
            logger.info("sso: new user %s for %s", user.username, identity)
            return user
        except IntegrityError:
            # A parallel first sign-in of the same person (two tabs, a double click) made the
            # identity first (the unique index waited for it to commit): its user is the one.
            identity = Identity.objects.select_for_update().select_related("user").get(issuer=issuer, subject=subject)
    identity.save(update_fields=["last_sign_in"])
    return identity.user


@transaction.atomic
def user_sign_in(*, issuer: str, claims: Mapping[str, Any]) -> AbstractUser:
    """The user behind (issuer, claims["sub"]): made on first sign-in (no password: they sign in
    through the provider), and on every sign-in its e-mail and names refreshed, its provider-managed
    groups set from GROUPS_CLAIM and, only when OIDC_STAFF_GROUP is set, is_staff set to
    membership of that group. Never makes a superuser. Raises ClaimsError without a usable `sub`."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject or len(subject) > 255:
        raise ClaimsError("the provider sent no usable 'sub' claim")
    email = claims.get("email") if isinstance(claims.get("email"), str) else ""
    user = _identity_user(issuer, subject, claims, email)
    user.email = email[:254]
    for field, claim in (("first_name", "given_name"), ("last_name", "family_name")):
        if isinstance(claims.get(claim), str):
            setattr(user, field, claims[claim][:150])
    names = group_names(claims.get(GROUPS_CLAIM))
    if settings.OIDC_STAFF_GROUP:
        user.is_staff = settings.OIDC_STAFF_GROUP in names
    user.save()
    groups_sync(user=user, names=names)
    return user
