"""Reads of the corpus that several surfaces share (the /documents/ page, the admin, the API).

Each starts from what corpus.permissions lets the user read; none re-implements the rules.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db.models import Count, Q, QuerySet

from corpus import permissions
from corpus.models import Collection, Document


def document_list(*, user, collection: Collection | None = None, status: str | None = None,
                  search: str | None = None) -> QuerySet[Document]:
    """The documents `user` may read, newest first, with `chunk_count` and their collection
    loaded. Narrowed to `collection` (one the caller got from permissions.collection_for),
    `status` (a Document.Status value) and `search` (every word found in the title or the
    source, case-insensitively)."""
    documents = permissions.readable_documents(user)
    if collection is not None:
        documents = documents.filter(collection=collection)
    if status:
        documents = documents.filter(status=status)
    for word in (search or "").split():
        documents = documents.filter(Q(title__icontains=word) | Q(source__icontains=word))
    return (documents.select_related("collection").annotate(chunk_count=Count("chunks"))
            .order_by("-created_at", "-pk"))


def upload_target(*, user, viewing: Collection | None) -> Collection | None:
    """The collection an upload form starts on: the one being viewed if `user` may add to it;
    with none viewed, their only writable collection. Otherwise none, and they choose: a form
    never silently picks another collection, least of all someone else's private one."""
    writable = permissions.writable_collections(user)
    if viewing is not None:
        return viewing if writable.filter(pk=viewing.pk).exists() else None
    only = list(writable[:2])
    return only[0] if len(only) == 1 else None


# The message naming unknown users or groups echoes what was typed: bounded, so a pasted page of text
# gives a line, not the page again.
_NAMES_SHOWN, _NAME_CHARS = 10, 60


def _no_such(kind: str, unknown: list[str]) -> str:
    """"No such user: nobody, gone." with each name cut to _NAME_CHARS and at most _NAMES_SHOWN named."""
    names = [name if len(name) <= _NAME_CHARS else name[:_NAME_CHARS - 1] + "…" for name in unknown[:_NAMES_SHOWN]]
    more = f" and {len(unknown) - _NAMES_SHOWN} more" if len(unknown) > _NAMES_SHOWN else ""
    return f"No such {kind}: {', '.join(names)}{more}."


def users_by_username(usernames: Iterable[str]) -> list:
    """The active users named in `usernames` (blank entries and repeats ignored), in the order
    given. Raises ValidationError naming every username that matches no active user."""
    wanted = list(dict.fromkeys(name.strip() for name in usernames if name and name.strip()))
    found = {user.get_username(): user
             for user in get_user_model().objects.filter(username__in=wanted, is_active=True)}
    unknown = [name for name in wanted if name not in found]
    if unknown:
        raise ValidationError(_no_such("user", unknown), code="unknown_user")
    return [found[name] for name in wanted]


def groups_by_name(names: Iterable[str]) -> list[Group]:
    """The groups named in `names` (blank entries and repeats ignored), in the order given. Raises
    ValidationError naming every name that matches no group."""
    wanted = list(dict.fromkeys(name.strip() for name in names if name and name.strip()))
    found = {group.name: group for group in Group.objects.filter(name__in=wanted)}
    unknown = [name for name in wanted if name not in found]
    if unknown:
        raise ValidationError(_no_such("group", unknown), code="unknown_group")
    return [found[name] for name in wanted]
