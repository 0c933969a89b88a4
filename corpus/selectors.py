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


# Sharing answers whether the names typed are people (groups) one may share with: its refusal names
# none of them, so that a run of attempts does not list the accounts (with corpus.sharing's cap on new
# names and the hourly ShareQuota). An unknown name, an inactive account, a group one is not in: one
# message alike. The group one keeps the rule's words, since it is the reason a real group is refused.
NOT_SHAREABLE_PEOPLE = "One or more of these usernames is not someone you may share with: check the spelling."
NOT_SHAREABLE_GROUPS = ("You may share only with groups you belong to, and one or more of these names is not one: "
                        "check the spelling.")


def names_given(names: Iterable[str]) -> list[str]:
    """`names` stripped, without blanks and repeats, in the order given."""
    return list(dict.fromkeys(name.strip() for name in names if name and name.strip()))


def users_by_username(usernames: Iterable[str]) -> list:
    """The active users named in `usernames` (blank entries and repeats ignored), in the order
    given. ValidationError (NOT_SHAREABLE_PEOPLE, naming none) if any matches no active user."""
    wanted = names_given(usernames)
    found = {user.get_username(): user
             for user in get_user_model().objects.filter(username__in=wanted, is_active=True)}
    if any(name not in found for name in wanted):
        raise ValidationError(NOT_SHAREABLE_PEOPLE, code="not_shareable")
    return [found[name] for name in wanted]


def groups_by_name(names: Iterable[str]) -> list[Group]:
    """The groups named in `names` (blank entries and repeats ignored), in the order given.
    ValidationError (NOT_SHAREABLE_GROUPS, naming none) if any matches no group."""
    wanted = names_given(names)
    found = {group.name: group for group in Group.objects.filter(name__in=wanted)}
    if any(name not in found for name in wanted):
        raise ValidationError(NOT_SHAREABLE_GROUPS, code="not_shareable")
    return [found[name] for name in wanted]
