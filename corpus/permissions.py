"""The one place that decides who may read or change what. Web views, the API, /v1 and the admin
all call these helpers; none re-implements the rules.

Three levels per collection:
- read: search it, ask it, open its documents (public, owner, reader, editor, superuser; a member
  of a reader group or an editor group);
- write: upload, move, delete and re-ingest its documents (owner, editor, member of an editor
  group, superuser). Moving a document out of a collection takes it from everyone who reads it
  there, so it needs the right to delete it (can_delete_document) besides write in the target;
- manage: rename, share (readers, editors and their groups) and delete the collection itself
  (owner, superuser; never a group).

Group membership is read at each request: a user removed from a group loses what only that group
gave them at once, and keeps what their other groups (or they themselves) are given. Inactive and
signed-out users get nothing.

Making a collection public (every signed-in user reads it, and "all collections" answers cite it)
is a staff decision: an owner may make their collection private again, not public.
"""

from __future__ import annotations

import functools

from django.core.exceptions import PermissionDenied
from django.db import connection, connections
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL
from django.http import Http404

from corpus.models import Chunk, Collection, Document, ShareInvitation


class Denied(Exception):
    """The caller may not do this. `status` is 404 when they may not even read the collection
    (its existence is not revealed) and 403 when they may read it but not do what they asked.
    str(exc) is a message for them."""

    def __init__(self, message: str, *, status: int):
        super().__init__(message)
        self.status = status

    def http_error(self) -> Http404 | PermissionDenied:
        """What a web view raises for this refusal, so Django answers with `status` (the REST API
        answers with `status` itself, api.errors): the one mapping of a refusal to a status code."""
        return Http404(str(self)) if self.status == 404 else PermissionDenied(str(self))


def _signed_in(user) -> bool:
    return user is not None and user.is_authenticated and user.is_active


def _editor(user) -> Q:
    """Who writes besides the owner: an editor, in person or through one of their groups."""
    return Q(editors=user) | Q(editor_groups__in=user.groups.all())


@functools.cache
def _readable_rows_sql() -> str:
    """collection_rows() of readable_collections(user): five times the user's id as parameters."""
    return (f"SELECT id, chunker, embedding_model FROM {connection.ops.quote_name(Collection._meta.db_table)} "
            f"WHERE id IN ({_readable_ids_sql()})")


@functools.cache
def _readable_ids_sql() -> str:
    """The ids of the collections one user reads (five times the user's id as parameters): public
    or owned, and shared with them or one of their groups, for reading or for editing."""
    def table(field) -> str:
        return connection.ops.quote_name(field.remote_field.through._meta.db_table)

    user_groups = connection.ops.quote_name(Collection.owner.field.related_model.groups.through._meta.db_table)
    shares = [f"SELECT collection_id FROM {table(Collection._meta.get_field(name))} WHERE user_id = %s"
              for name in ("readers", "editors")]
    shares += [f"SELECT collection_id FROM {table(Collection._meta.get_field(name))} JOIN {user_groups} ug "
               f"USING (group_id) WHERE ug.user_id = %s" for name in ("reader_groups", "editor_groups")]
    own = f"SELECT id FROM {connection.ops.quote_name(Collection._meta.db_table)} WHERE is_public OR owner_id = %s"
    return " UNION ".join([own, *shares])


def readable_collections(user) -> QuerySet[Collection]:
    """Collections `user` may read: superusers all; others (staff included) the public ones, their
    own, and those shared with them or with one of their groups."""
    if not _signed_in(user):
        return Collection.objects.none()
    if user.is_superuser:
        return Collection.objects.all()
    # Every search and ask starts here: as ORM lookups over the four shares this cost ~1.8 ms of
    # query building and compiling per request (docs/scaling.md, "Searches per second"); the same
    # rule as one parameterised statement costs ~0.1 ms. A pk subquery keeps the shares' joins out
    # of callers' queries (no duplicates, no distinct). tests/corpus/test_permissions.py and the
    # permission matrix hold it to the rule above.
    readable = Collection.objects.filter(pk__in=RawSQL(_readable_ids_sql(), [user.pk] * 5))
    readable._readable_by = user.pk  # for collection_rows(); a queryset derived from it does not keep it
    return readable


def collection_rows(collections: QuerySet[Collection]) -> list[tuple[int, str, str]]:
    """(id, chunker, embedding_model) of each collection of `collections`, in no particular order:
    what a search reads first. readable_collections(user) itself (not a queryset derived from it,
    which is read through the ORM) is read with one fixed statement."""
    # Every search starts here. The ORM built and compiled this read of readable_collections(user)
    # at ~0.6 ms of the web process's CPU per search (~5% of it); the same statement, fixed, costs
    # ~0.16 ms (docs/scaling.md, "Searches per second"). A QuerySet's clone does not copy the
    # marker, so a filtered, excluded or reordered queryset never takes this path.
    user_id = getattr(collections, "_readable_by", None)
    if user_id is None:
        return list(collections.values_list("id", "chunker", "embedding_model"))
    with connections[collections.db].cursor() as cursor:  # the database the ORM would read (a replica)
        cursor.execute(_readable_rows_sql(), [user_id] * 5)
        return cursor.fetchall()


def writable_collections(user) -> QuerySet[Collection]:
    """Collections whose documents `user` may add, move, delete and re-ingest."""
    if not _signed_in(user):
        return Collection.objects.none()
    if user.is_superuser:
        return Collection.objects.all()
    return Collection.objects.filter(pk__in=Collection.objects.filter(Q(owner=user) | _editor(user)).values("pk"))


def manageable_collections(user) -> QuerySet[Collection]:
    """Collections `user` may rename, share and delete: their own (superusers: all). Groups never manage."""
    if not _signed_in(user):
        return Collection.objects.none()
    if user.is_superuser:
        return Collection.objects.all()
    return Collection.objects.filter(owner=user)


def readable_documents(user):
    return Document.objects.filter(collection__in=readable_collections(user))


def readable_chunks(user):
    return Chunk.objects.filter(document__collection__in=readable_collections(user))


def own_records(user, queryset: QuerySet, *, user_field: str = "user") -> QuerySet:
    """The rows of `queryset` (conversations, their messages, ratings) that are `user`'s own through
    `user_field`: what anyone but a superuser may see of them, the admin included (other people's
    questions, answers and the source text in them are theirs)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return queryset.none()
    if user.is_superuser:
        return queryset
    return queryset.filter(**{user_field: user})


def can_read_collection(user, collection: Collection) -> bool:
    return readable_collections(user).filter(pk=collection.pk).exists()


def can_write_collection(user, collection: Collection) -> bool:
    return writable_collections(user).filter(pk=collection.pk).exists()


def can_manage_collection(user, collection: Collection) -> bool:
    return manageable_collections(user).filter(pk=collection.pk).exists()


def can_read_document(user, document: Document) -> bool:
    return can_read_collection(user, document.collection)


def can_write_document(user, document: Document) -> bool:
    return can_write_collection(user, document.collection)


def can_delete_document(user, document: Document) -> bool:
    """Whether `user` may delete `document`, or move it out of its collection (which removes it
    there just the same): write access to its collection."""
    return can_write_collection(user, document.collection)


def check_move(user, document: Document, target: Collection) -> None:
    """Raise Denied unless `user` may move `document` (which they read) into `target` (which they
    read): the right to delete it where it is, and write access to the target (403 otherwise)."""
    if not can_delete_document(user, document):
        raise Denied(f"You may not move documents out of the collection {document.collection.slug!r}: it "
                     "takes the right to delete them there.", status=403)
    if not can_write_collection(user, target):
        raise Denied(f"You may not add documents to the collection {target.slug!r}.", status=403)


def can_share_with_group(user, group) -> bool:
    """Whether `user` may add `group` to a collection's readers or editors: its members (or a
    superuser). Sharing with a group one is not in would push the collection into strangers' answers."""
    return _signed_in(user) and (user.is_superuser or user.groups.filter(pk=group.pk).exists())


def invitation_for(user, pk: int):
    """`user`'s own pending share invitation `pk`; Denied (404) for anyone else's or a gone one."""
    invitation = (ShareInvitation.objects.select_related("collection", "invited_by").filter(pk=pk, user=user).first()
                  if _signed_in(user) else None)
    if invitation is None:
        raise Denied(f"No invitation {pk} for you.", status=404)
    return invitation


def can_publish(user) -> bool:
    """Whether `user` may make a collection public: active staff."""
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_staff)


def can_reembed(user, collection: Collection) -> bool:
    """Whether `user` may start re-embedding `collection` with the configured model (a whole
    collection's worth of compute): active staff who manage it."""
    return can_publish(user) and can_manage_collection(user, collection)


def check_publish(user, *, was_public: bool, is_public: bool) -> None:
    """Raise Denied (403) when a change from `was_public` to `is_public` makes a collection public
    and `user` may not (can_publish)."""
    if is_public and not was_public and not can_publish(user):
        raise Denied("Only staff may make a collection public; share it with readers instead.", status=403)


def collection_for(user, slug: str, *, write: bool = False, manage: bool = False) -> Collection:
    """The collection `slug` (its current slug, or one it had before a rename) if `user` may read it
    (and write its documents with `write`, manage it with `manage`). Raises Denied: 404 when they
    may not read it or it does not exist, 403 when they may read it but not write or manage it."""
    readable = readable_collections(user)
    # A renamed collection's old slug still finds it (and only it: old slugs stay reserved).
    collection = readable.filter(slug=slug).first() or readable.filter(old_slugs__slug=slug).first()
    if collection is None:
        raise Denied(f"No collection {slug!r} that you may read.", status=404)
    if manage and not can_manage_collection(user, collection):
        raise Denied(f"Only the owner of the collection {slug!r} may change or share it.", status=403)
    if write and not can_write_collection(user, collection):
        raise Denied(f"You may not change documents of the collection {slug!r}.", status=403)
    return collection


def document_for(user, pk: int, *, write: bool = False) -> Document:
    """The document `pk` if `user` may read it (and change it with `write`). Raises Denied like
    collection_for."""
    document = readable_documents(user).select_related("collection").filter(pk=pk).first()
    if document is None:
        raise Denied(f"No document {pk} that you may read.", status=404)
    if write and not can_write_collection(user, document.collection):
        raise Denied(f"You may not change documents of the collection {document.collection.slug!r}.", status=403)
    return document


def can_configure_llm(user) -> bool:
    """Whether `user` may choose the answering LLM in the admin, test it and list its models: active
    superusers only. The LLM receives every user's questions and the passages of every collection,
    and the stored key is sent to it: choosing it is choosing who reads everything."""
    return _signed_in(user) and user.is_superuser


def collection_row_for(user, queryset: QuerySet, pk: int, *, write: bool = False, noun: str = "item"):
    """The row `pk` of `queryset` — rows that belong to a collection through a `collection` foreign
    key, such as a collection's sources — if `user` may read its collection (and write it with
    `write`: the collection's editors manage such rows). Raises Denied like document_for, naming
    the row as `noun`. Apps above corpus use it so that the rules stay here."""
    row = queryset.filter(collection__in=readable_collections(user)).select_related("collection").filter(pk=pk).first()
    if row is None:
        raise Denied(f"No {noun} {pk} that you may see.", status=404)
    if write and not can_write_collection(user, row.collection):
        raise Denied(f"You may not change the {noun}s of the collection {row.collection.slug!r}.", status=403)
    return row
