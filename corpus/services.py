"""Writes to the corpus: collections (create, update, delete; sharing is corpus.sharing), document
uploads, moves, re-ingestion and deletion.

Processing itself happens in a Celery task (corpus.tasks), enqueued only after the transaction
that made it necessary has committed. Callers check permissions (corpus.permissions) first; these
functions only keep the data consistent.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation, ValidationError
from django.core.files.base import ContentFile
from django.core.validators import validate_slug
from django.db import IntegrityError, transaction
from django.utils.text import get_valid_filename, slugify

from audit import record as audit_record
from audit.models import Action
from corpus import locks, uploads
from corpus.metadata import clean_tags, merged_tags
from corpus.models import IN_PROGRESS, SLUG_UNAVAILABLE, Collection, CollectionSlug, Document
from corpus.reembed.services import reembed_start
from corpus.tasks import process_document_task, reembed_collection_task

logger = logging.getLogger(__name__)


class DocumentGone(Exception):
    """The document was deleted while the request was on its way (another request or user got
    there first); str(exc) says so. Answered 404 by api.errors, like an unknown document."""

    def __init__(self, pk: int) -> None:
        super().__init__(f"Document {pk} has just been deleted.")
        self.pk = pk


def _locked_document(pk: int) -> Document:
    """Document `pk` with its row locked until the transaction ends, its collection's first
    (corpus.locks: LOCK ORDER); DocumentGone if a concurrent delete removed it after the caller
    found it."""
    document = locks.document_for_update(pk)
    if document is None:
        raise DocumentGone(pk)
    return document

Status = Document.Status


def collection_get_or_create(*, slug: str, name: str | None = None, owner=None) -> Collection:
    """The collection `slug` (or the one renamed from it), created (named `name` or after the slug)
    if there is none."""
    validate_slug(slug)
    renamed = Collection.objects.filter(old_slugs__slug=slug).first()
    if renamed is not None:
        return renamed  # the collection that had this slug before a rename
    collection, created = Collection.objects.get_or_create(
        slug=slug, defaults={"name": name or slug.replace("-", " ").replace("_", " ").capitalize(), "owner": owner})
    if created:
        logger.info("created collection %s", slug)
    return collection


# Collection fields a caller may set besides name and slug; readers and editors go through
# corpus.sharing.collection_share, the owner is set at creation.
COLLECTION_SETTINGS = ("description", "chunker", "chunk_size", "chunk_overlap", "semantic_threshold",
                       "contextualization", "embedding_mode", "is_public")


# The range of the model's collection_chunk_size_range constraint.


def slug_from_name(name: str) -> str:
    """The slug a collection named `name` gets when none is given ("" when the name has no
    letters or digits that transliterate to ASCII)."""
    return slugify(name)[:Collection._meta.get_field("slug").max_length].strip("-")


def _check_fields(fields: dict, allowed: Iterable[str]) -> None:
    unknown = sorted(set(fields) - set(allowed))
    if unknown:
        raise TypeError(f"unknown collection field(s): {', '.join(unknown)}")


def _save_validated(collection: Collection) -> None:
    """Validate every field and constraint (ValidationError with per-field messages), then save."""
    errors: dict[str, list[str]] = {}
    try:
        # The model's check constraints give messages naming the constraint; ours name the field.
        collection.full_clean(validate_constraints=False)
    except ValidationError as exc:
        errors = exc.update_error_dict(errors)
    if errors:
        raise ValidationError(errors)
    try:
        with transaction.atomic():
            collection.save()
    except IntegrityError:
        # Another request took the slug between the check and the save.
        raise ValidationError({"slug": SLUG_UNAVAILABLE}) from None


def collection_create(*, owner, name: str, slug: str = "", request=None, **settings_fields) -> Collection:
    """Create a collection owned by `owner`; an empty `slug` is derived from the name.
    `settings_fields` are any of COLLECTION_SETTINGS. Created public, it is audited as a sharing
    change (detail `{"is_public": {"from": None, "to": True}}`; by the request's user, else the owner),
    as making it public later is. Raises ValidationError (per field) for a taken or invalid slug or
    invalid settings, TypeError for a field that cannot be set."""
    _check_fields(settings_fields, COLLECTION_SETTINGS)
    name = (name or "").strip()
    collection = Collection(owner=owner, name=name, slug=(slug or "").strip() or slug_from_name(name),
                            **settings_fields)
    with transaction.atomic():
        _save_validated(collection)
        if collection.is_public:  # every signed-in user reads it from the start
            audit_record(Action.SHARING_CHANGED, target=collection, request=request,
                         actor=None if request is not None else owner,
                         detail={"is_public": {"from": None, "to": True}})
    logger.info("created collection %s", collection.slug)
    return collection


def collection_update(*, collection: Collection, request=None, **fields) -> Collection:
    """Change `name`, `slug` or any of COLLECTION_SETTINGS. When the change alters how chunks are
    built (Collection.pipeline_signature), the collection's documents are queued for re-ingestion.
    Making it public or private again is audited as a sharing change (`request`: who, from where).
    Raises ValidationError like collection_create; the collection is then left unchanged."""
    _check_fields(fields, ("name", "slug", *COLLECTION_SETTINGS))
    with transaction.atomic():
        locked = Collection.objects.select_for_update().get(pk=collection.pk)
        before, old_slug, was_public = locked.pipeline_signature(), locked.slug, locked.is_public
        for field, value in fields.items():
            setattr(locked, field, value.strip() if field in ("name", "slug") else value)
        _save_validated(locked)
        if locked.slug != old_slug:
            # The old slug stays this collection's (CollectionSlug); taking back an old one frees its row.
            CollectionSlug.objects.filter(collection=locked, slug=locked.slug).delete()
            CollectionSlug.objects.get_or_create(slug=old_slug, defaults={"collection": locked})
        if locked.pipeline_signature() != before:
            for document in locked.documents.all():
                document_reingest(document=document)
        if locked.is_public != was_public:  # every signed-in user reads it now, or no longer
            audit_record(Action.SHARING_CHANGED, target=locked, request=request,
                         detail={"is_public": {"from": was_public, "to": locked.is_public}})
    for field in Collection._meta.concrete_fields:
        setattr(collection, field.attname, getattr(locked, field.attname))
    return collection


def collection_update_rebuilds(*, collection: Collection, **fields) -> bool:
    """Whether collection_update(collection=collection, **fields) would queue documents again: the
    change alters Collection.pipeline_signature and the collection has documents. Reads only."""
    _check_fields(fields, ("name", "slug", *COLLECTION_SETTINGS))
    changed = copy.copy(collection)
    for field, value in fields.items():
        setattr(changed, field, value)
    return changed.pipeline_signature() != collection.pipeline_signature() and collection.documents.exists()


def collection_delete(*, collection: Collection, request=None) -> None:
    """Delete the collection, its documents and their chunks; the stored files go after commit.
    Audited ("collection deleted", by the request's user)."""
    with transaction.atomic():
        # The collection first (corpus.locks): the cascade then deletes its documents' rows.
        Collection.objects.select_for_update().filter(pk=collection.pk).first()
        names = [name for name in Document.objects.filter(collection=collection).values_list("file", flat=True)
                 if name]
        audit_record(Action.COLLECTION_DELETED, target=collection, request=request,
                     detail={"slug": collection.slug, "documents": len(names)})
        Collection.objects.filter(pk=collection.pk).delete()
        _delete_files_on_commit(names)
    logger.info("deleted collection %s (%s stored files)", collection.slug, len(names))


def _delete_files_on_commit(names: list[str]) -> None:
    storage = Document._meta.get_field("file").storage

    def delete() -> None:
        for name in names:
            try:
                storage.delete(name)
            except OSError:
                logger.exception("could not delete the stored file %s", name)

    if names:
        transaction.on_commit(delete)


def _enqueue(document_id: int) -> None:
    transaction.on_commit(lambda: process_document_task.delay(document_id))


# A file name is at most 255 bytes on common file systems; the storage may add "_" and 7
# characters to make a name unique, so stored names stay below that.
STORED_NAME_MAX_BYTES = 255 - 8
_MAX_EXTENSION_BYTES = 16


def _cut_utf8(text: str, max_bytes: int) -> str:
    return text.encode("utf-8")[:max(max_bytes, 0)].decode("utf-8", errors="ignore")


def stored_name(filename: str) -> str:
    """A safe name to store an upload under: the base name, characters the storage would refuse
    removed, cut to STORED_NAME_MAX_BYTES bytes of UTF-8 keeping the extension."""
    name = PurePosixPath(filename.replace("\\", "/")).name
    try:
        name = get_valid_filename(name)
    except SuspiciousFileOperation:  # nothing usable left (e.g. "..", "???")
        name = ""
    if not name or name.startswith("."):  # no hidden files: ".txt" -> "document.txt"
        name = "document" + name
    path = PurePosixPath(name)
    suffix = path.suffix if len(path.suffix.encode("utf-8")) <= _MAX_EXTENSION_BYTES else ""
    stem = name[:len(name) - len(suffix)] if suffix else name
    stem = _cut_utf8(stem, STORED_NAME_MAX_BYTES - len(suffix.encode("utf-8"))) or "document"
    return _cut_utf8(stem + suffix, STORED_NAME_MAX_BYTES)


@dataclass(frozen=True)
class UploadResult:
    """What became of one uploaded file: the document it created or updated, or why it was
    refused (a message naming the file)."""

    name: str
    document: Document | None = None
    error: str | None = None

    @property
    def accepted(self) -> bool:
        return self.error is None


SOURCE_MAX_LENGTH = Document._meta.get_field("source").max_length


def document_upload(*, collection: Collection, file, source: str | None = None, uploaded_by=None) -> UploadResult:
    """Check `file` (anything with .name, .size and .read(), e.g. an UploadedFile) against the one
    upload rule (corpus.uploads.upload_error) and ingest it into `collection` as `source`
    (default: its name). A refused file gives an UploadResult with the error and stores nothing.
    The caller has checked that the uploader may write to `collection`."""
    name = uploads.clean_name(source or file.name or "")
    error = uploads.upload_error(name or "(no name)", file.size)
    if error is None and len(name) > SOURCE_MAX_LENGTH:
        error = f"{name[:60]}…: the name is longer than {SOURCE_MAX_LENGTH} characters."
    if error is not None:
        return UploadResult(name=name, error=error)
    document = document_ingest(collection=collection, source=name, data=file.read(), filename=file.name or name,
                               uploaded_by=uploaded_by)
    return UploadResult(name=name, document=document)


def documents_upload(*, collection: Collection, files: Iterable, uploaded_by=None) -> list[UploadResult]:
    """document_upload for each file, in order: one refused file never blocks the others."""
    return [document_upload(collection=collection, file=file, uploaded_by=uploaded_by) for file in files]


def document_ingest(*, collection: Collection, source: str, data: bytes, filename: str,
                    uploaded_by=None, tags: list[str] | None = None) -> Document:
    """Create or update the document `source` of `collection` with the file `data`.

    Unchanged content already built under the collection's current settings is a no-op. Otherwise
    the file is stored and processing is enqueued on commit; the document's current chunks stay
    searchable until the new ones replace them. A file over MAX_UPLOAD_BYTES is not stored: the
    document is marked failed with the upload rule's message. Other files the upload rule refuses
    (empty, unsupported type) are stored and fail when parsed: surfaces check them first through
    document_upload. `tags` (already cleaned: a source's tags), when given, are added to the
    document's tags; the ones set by hand stay (corpus.metadata.merged_tags).
    """
    source = source.strip()
    if not source:
        raise ValueError("source must not be empty")
    content_hash = hashlib.sha256(data).hexdigest()
    for attempt in range(2):
        try:
            with transaction.atomic():
                return _ingest_locked(collection, source, data, filename, uploaded_by, content_hash, tags)
        except IntegrityError:
            # Two uploads of a new source at once: the other one created the row; update it instead.
            if attempt:
                raise
    raise AssertionError("unreachable")


def _ingest_locked(collection: Collection, source: str, data: bytes, filename: str, uploaded_by,
                   content_hash: str, tags: list[str] | None) -> Document:
    locks.collection_key_share(collection.pk)  # before the document's row (corpus.locks)
    document = Document.objects.select_for_update().filter(collection=collection, source=source).first()
    current = (document.metadata or {}).get("tags") if document is not None else None
    if document is not None and tags and merged_tags(current, add=tags) != current:
        document.metadata = {**(document.metadata or {}), "tags": merged_tags(current, add=tags)}
        document.save(update_fields=["metadata", "updated_at"])
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
        document = Document(collection=collection, source=source, metadata={"tags": tags} if tags else {})
    old_file = document.file.name if document.file else ""
    document.uploaded_by = uploaded_by or document.uploaded_by
    document.content_hash = content_hash
    document.progress_done = document.progress_total = 0
    # Surfaces refuse such files before this (document_upload); this guards the callers that do not.
    error = uploads.upload_error(source, len(data)) if len(data) > settings.MAX_UPLOAD_BYTES else None
    if error:
        document.file = ""
        document.status = Status.FAILED
        document.error = error
        document.save()
    else:
        document.file.save(stored_name(filename), ContentFile(data), save=False)
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
    """Process the document again if its chunks are out of date (always, with `force`).
    DocumentGone if it was deleted meanwhile."""
    with transaction.atomic():
        locked = _locked_document(document.pk)
        if not force and locked.is_current():
            return locked
        if locked.status == Status.FAILED and not locked.file:
            return locked  # refused at upload; only a new upload can fix it
        if force or locked.status not in IN_PROGRESS:
            _requeue(locked)
        _enqueue(locked.pk)
    return locked


def document_move(*, document: Document, collection: Collection, request=None, actor=None) -> Document:
    """Move `document` into `collection`. Chunks built under the same settings stay; otherwise the
    document is re-ingested under the target's settings (a failed one stays failed until
    re-ingested). Audited ("document moved", from and to, by the request's user or `actor`).
    Raises ValidationError if the target already holds a document with the same source;
    DocumentGone if it was deleted meanwhile. The caller has checked the move
    (corpus.permissions.check_move)."""
    with transaction.atomic():
        locks.collection_key_share(collection.pk)  # collections before the document (corpus.locks)
        locked = _locked_document(document.pk)
        if locked.collection_id == collection.pk:
            return locked
        origin = locked.collection
        clash = ValidationError(
            f"{locked.source}: the collection {collection.name!r} already has a document with this source.",
            code="source_exists")
        if Document.objects.filter(collection=collection, source=locked.source).exists():
            raise clash
        locked.collection = collection
        try:
            with transaction.atomic():
                locked.save(update_fields=["collection", "updated_at"])
        except IntegrityError:
            raise clash from None
        audit_record(Action.DOCUMENT_MOVED, target=locked, request=request, actor=actor,
                     detail={"source": locked.source, "from": origin.slug, "to": collection.slug})
        if locked.status != Status.FAILED and not locked.is_current():
            if locked.status not in IN_PROGRESS:
                _requeue(locked)
            # Even when in progress: the running build uses the old settings; this run follows it.
            _enqueue(locked.pk)
    logger.info("moved document %s to collection %s", locked.pk, collection.slug)
    return locked


def document_move_rebuilds(*, document: Document, collection: Collection) -> bool:
    """Whether document_move(document=document, collection=collection) would queue the document to
    be built again: the target's chunk settings are not those of the collection it is in. Reads only."""
    return (document.collection_id != collection.pk and document.status != Status.FAILED
            and document.collection.pipeline_signature() != collection.pipeline_signature())


def document_set_tags(*, document: Document, tags: object) -> Document:
    """Replace the document's tags (metadata["tags"]) with `tags`, validated by
    corpus.metadata.clean_tags (ValidationError on bad input); the rest of its metadata stays.
    DocumentGone if it was deleted meanwhile. The caller has checked write access."""
    cleaned = clean_tags(tags)
    with transaction.atomic():
        locked = _locked_document(document.pk)
        locked.metadata = {**(locked.metadata or {}), "tags": cleaned}
        locked.save(update_fields=["metadata", "updated_at"])
    return locked


def document_swap_tags(*, document: Document, remove: list[str], add: list[str]) -> Document:
    """Take `remove` off the document's tags and put `add` on (corpus.metadata.merged_tags): a
    source's tags changed from `remove` to `add`, and the tags set by hand stay. DocumentGone if
    it was deleted meanwhile."""
    with transaction.atomic():
        locked = _locked_document(document.pk)
        locked.metadata = {**(locked.metadata or {}),
                           "tags": merged_tags((locked.metadata or {}).get("tags"), add=add, remove=remove)}
        locked.save(update_fields=["metadata", "updated_at"])
    return locked


def document_delete(*, document: Document, request=None) -> None:
    """Delete the document, its chunks (and so their vectors) and, after commit, its stored file.
    Audited ("document deleted", by the request's user; no actor without a request)."""
    with transaction.atomic():
        name = document.file.name if document.file else ""
        audit_record(Action.DOCUMENT_DELETED, target=document, request=request,
                     detail={"collection": document.collection.slug, "source": document.source})
        Document.objects.filter(pk=document.pk).delete()
        _delete_files_on_commit([name] if name else [])


def collection_reembed(*, collection: Collection, model: str | None = None) -> bool:
    """Start re-embedding `collection` with `model` (default EMBEDDING_MODEL) in a worker, queued
    after commit (corpus.reembed.services). Returns whether one was started (False: already on
    that model or re-embedding to it). Permission checks are the caller's (permissions.can_reembed)."""
    if not reembed_start(collection=collection, model=model):
        return False
    transaction.on_commit(lambda: reembed_collection_task.delay(collection.pk))
    return True
