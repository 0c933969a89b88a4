"""Writes to the corpus: collections, document uploads, re-ingestion and deletion.

Processing itself happens in a Celery task (corpus.tasks), enqueued only after the transaction
that made it necessary has committed.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.validators import validate_slug
from django.db import IntegrityError, transaction

from corpus import uploads
from corpus.models import IN_PROGRESS, Collection, Document
from corpus.tasks import process_document_task

logger = logging.getLogger(__name__)

Status = Document.Status


def collection_get_or_create(*, slug: str, name: str | None = None, owner=None) -> Collection:
    """The collection `slug`, created (named `name` or after the slug) if it does not exist."""
    validate_slug(slug)
    collection, created = Collection.objects.get_or_create(
        slug=slug, defaults={"name": name or slug.replace("-", " ").replace("_", " ").capitalize(), "owner": owner})
    if created:
        logger.info("created collection %s", slug)
    return collection


def _enqueue(document_id: int) -> None:
    transaction.on_commit(lambda: process_document_task.delay(document_id))


def size_error(size: int) -> str | None:
    """The message for a file over settings.MAX_UPLOAD_BYTES, else None."""
    if size <= settings.MAX_UPLOAD_BYTES:
        return None
    return f"The file is {size / 1e6:.1f} MB; the limit is {uploads.limit_text()}."


def document_ingest(*, collection: Collection, source: str, data: bytes, filename: str,
                    uploaded_by=None) -> Document:
    """Create or update the document `source` of `collection` with the file `data`.

    Unchanged content already built under the collection's current settings is a no-op. Otherwise
    the file is stored and processing is enqueued on commit; the document's current chunks stay
    searchable until the new ones replace them. A file over MAX_UPLOAD_BYTES is not stored: the
    document is marked failed with a message.
    """
    source = source.strip()
    if not source:
        raise ValueError("source must not be empty")
    content_hash = hashlib.sha256(data).hexdigest()
    for attempt in range(2):
        try:
            with transaction.atomic():
                return _ingest_locked(collection, source, data, filename, uploaded_by, content_hash)
        except IntegrityError:
            # Two uploads of a new source at once: the other one created the row; update it instead.
            if attempt:
                raise
    raise AssertionError("unreachable")


def _ingest_locked(collection: Collection, source: str, data: bytes, filename: str, uploaded_by,
                   content_hash: str) -> Document:
    document = Document.objects.select_for_update().filter(collection=collection, source=source).first()
    if document is not None and document.content_hash == content_hash and document.file:
        document.collection = collection
        if document.is_current():
            return document
        if document.status not in IN_PROGRESS:
            _requeue(document)
        # Enqueue even when in progress: a duplicate run is a no-op, and it recovers a lost message.
        _enqueue(document.pk)
        return document

    if document is None:
        document = Document(collection=collection, source=source)
    old_file = document.file.name if document.file else ""
    document.uploaded_by = uploaded_by or document.uploaded_by
    document.content_hash = content_hash
    document.progress_done = document.progress_total = 0
    error = size_error(len(data))
    if error:
        document.file = ""
        document.status = Status.FAILED
        document.error = error
        document.save()
    else:
        name = PurePosixPath(filename).name or "document"
        document.file.save(name, ContentFile(data), save=False)
        document.status = Status.QUEUED
        document.error = ""
        document.save()
        _enqueue(document.pk)
    if old_file:
        storage = document.file.storage
        transaction.on_commit(lambda: storage.delete(old_file))
    return document


def _requeue(document: Document) -> None:
    document.status = Status.QUEUED
    document.error = ""
    document.progress_done = document.progress_total = 0
    document.save(update_fields=["status", "error", "progress_done", "progress_total", "updated_at"])


def document_reingest(*, document: Document, force: bool = False) -> Document:
    """Process the document again if its chunks are out of date (always, with `force`)."""
    with transaction.atomic():
        locked = Document.objects.select_for_update().select_related("collection").get(pk=document.pk)
        if not force and locked.is_current():
            return locked
        if locked.status == Status.FAILED and not locked.file:
            return locked  # refused at upload; only a new upload can fix it
        if force or locked.status not in IN_PROGRESS:
            _requeue(locked)
        _enqueue(locked.pk)
    return locked


def document_delete(*, document: Document) -> None:
    """Delete the document, its chunks (and so their vectors) and, after commit, its stored file."""
    with transaction.atomic():
        name = document.file.name if document.file else ""
        storage = document.file.storage
        Document.objects.filter(pk=document.pk).delete()
        if name:
            transaction.on_commit(lambda: storage.delete(name))
