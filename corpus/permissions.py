"""The one place that decides who may read or change what. Web views, the API and the admin
all call these helpers; none re-implements the rules."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied

from corpus.models import Chunk, Collection, Document


def readable_collections(user):
    return Collection.objects.readable_by(user)


def writable_collections(user):
    return Collection.objects.writable_by(user)


def readable_documents(user):
    return Document.objects.filter(collection__in=readable_collections(user))


def readable_chunks(user):
    return Chunk.objects.filter(document__collection__in=readable_collections(user))


def can_read_collection(user, collection: Collection) -> bool:
    return readable_collections(user).filter(pk=collection.pk).exists()


def can_write_collection(user, collection: Collection) -> bool:
    return writable_collections(user).filter(pk=collection.pk).exists()


def can_read_document(user, document: Document) -> bool:
    return can_read_collection(user, document.collection)


def can_write_document(user, document: Document) -> bool:
    return can_write_collection(user, document.collection)


def require_write(user, collection: Collection) -> None:
    if not can_write_collection(user, collection):
        raise PermissionDenied(f"You may not change the collection {collection.slug!r}.")
