"""Writes to sources: add, change, delete, and queue a sync. Callers check permissions first
(corpus.permissions: editors of the collection manage its sources); these keep the data valid.

Every problem with the input is a ValidationError naming the field, with a message for the person
who sent it (the API answers 400 with it, the web form shows it, the CLI prints it).
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

import audit
from audit.models import Action
from corpus import services as corpus_services
from corpus.metadata import clean_tags
from corpus.models import Collection, Document
from outbound.addresses import AddressRefused, literal_address, refusal
from sources import quotas
from sources.folders import FOLDERS_FOR_STAFF, FolderRefused, allowed_roots, may_add_folder, resolve_folder
from sources.models import MAX_DEPTH_LIMIT, MAX_PAGES_LIMIT, Source

logger = logging.getLogger(__name__)

URL_MAX_LENGTH = Source._meta.get_field("url").max_length
# Fields a source's owner may change; where it reads from (kind, url, path) is fixed: add another source.
CHANGEABLE = ("schedule", "max_pages", "max_depth", "tags")


def clean_url(url: object) -> str:
    """An absolute http(s) URL with a host and no user:password@, at most URL_MAX_LENGTH characters;
    ValidationError otherwise.
    A host spelled as a non-public IP address (127.0.0.1, 2130706433, 169.254.169.254...) is refused
    here already unless SOURCES_ALLOW_PRIVATE; names are resolved and checked by sources.web at each
    fetch (a name's addresses can change after this check)."""
    if not isinstance(url, str) or not url.strip():
        raise ValidationError({"url": "Give the page's or the site's URL (http:// or https://)."})
    url = url.strip()
    if len(url) > URL_MAX_LENGTH:
        raise ValidationError({"url": f"The URL is longer than {URL_MAX_LENGTH} characters."})
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ValidationError({"url": f"{url[:100]}: not a valid URL."}) from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise ValidationError({"url": f"{url[:100]}: not an http:// or https:// URL with a host name."})
    if "@" in parts.netloc:
        # Never fetched (sources.web), and a password would be stored and shown to every reader.
        raise ValidationError({"url": "A URL with a user name or password is not accepted: sources fetch public "
                                      "pages only."})
    if not settings.SOURCES_ALLOW_PRIVATE:
        try:
            address = literal_address(parts.hostname)
            reason = refusal(address) if address is not None else None
        except AddressRefused as exc:
            reason = str(exc)
        if reason:
            raise ValidationError({"url": f"{url[:100]}: {parts.hostname} is {reason.removeprefix('refused: ')}; "
                                          "web sources fetch public addresses only (SOURCES_ALLOW_PRIVATE)."})
    return url


def _check_limits(max_pages: object, max_depth: object) -> None:
    errors = {}
    if not isinstance(max_pages, int) or isinstance(max_pages, bool) or not 1 <= max_pages <= MAX_PAGES_LIMIT:
        errors["max_pages"] = f"max_pages must be a whole number from 1 to {MAX_PAGES_LIMIT}."
    if not isinstance(max_depth, int) or isinstance(max_depth, bool) or not 0 <= max_depth <= MAX_DEPTH_LIMIT:
        errors["max_depth"] = f"max_depth must be a whole number from 0 to {MAX_DEPTH_LIMIT}."
    if errors:
        raise ValidationError(errors)


def _check_schedule(schedule: object) -> None:
    if schedule not in Source.Schedule.values:
        raise ValidationError({"schedule": f"schedule must be one of {', '.join(Source.Schedule.values)}."})


def _clean_tags(tags: object) -> list[str]:
    try:
        return clean_tags(tags)
    except ValidationError as exc:
        raise ValidationError({"tags": exc.messages}) from None


def existing_source(*, collection: Collection, kind: str, url: str = "", path: str = "") -> Source | None:
    """The source of `collection` reading from this (cleaned) location, if it has one."""
    return Source.objects.filter(collection=collection, kind=kind, url=url, path=path).first()


def _already_there(source: Source) -> ValidationError:
    return ValidationError({"url" if source.url else "path":
                            f"The collection {source.collection.slug!r} already has this source: {source} "
                            f"(source {source.pk})."}, code="source_exists")


def clean_new_source(*, kind: str, url: str = "", path: str = "", schedule: str = Source.Schedule.DAILY,
                     max_pages: int = 100, max_depth: int = 3, tags: object = (),
                     collection: Collection | None = None) -> dict:
    """The fields of a new source, checked and normalised (a folder resolved inside SOURCES_FOLDERS,
    a URL stripped, tags cleaned): source_create's arguments. ValidationError per field otherwise,
    also (with `collection`) when that collection already has the source, naming it."""
    if kind not in Source.Kind.values:
        raise ValidationError({"kind": f"kind must be one of {', '.join(Source.Kind.values)}."})
    if kind == Source.Kind.FOLDER:
        if url:
            raise ValidationError({"url": "A folder source has a path, not a URL."})
        try:
            path = str(resolve_folder(path))
        except FolderRefused as exc:
            raise ValidationError({"path": str(exc)}) from None
    else:
        if path:
            raise ValidationError({"path": f"A {kind} source has a URL, not a path."})
        url = clean_url(url)
    _check_limits(max_pages, max_depth)
    _check_schedule(schedule)
    tags = _clean_tags(list(tags) if isinstance(tags, tuple) else tags)
    existing = None if collection is None else existing_source(collection=collection, kind=kind, url=url, path=path)
    if existing is not None:
        raise _already_there(existing)
    return {"kind": kind, "url": url, "path": path, "schedule": schedule, "max_pages": max_pages,
            "max_depth": max_depth, "tags": tags}


def source_create(*, collection: Collection, created_by=None, sync: bool = True, request=None, **fields) -> Source:
    """Add a source to `collection` (`fields`: clean_new_source's arguments); with `sync`, its first
    sync is queued (after commit). A collection holds a location once (source_unique_location): adding
    it again is a ValidationError naming the existing source; a folder needs may_add_folder(created_by); a
    user (staff aside: the admin is theirs) adds at most quotas.MAX_SOURCES_PER_USER sources. Audited
    (`request`: the client's address)."""
    # With folders off altogether (no SOURCES_FOLDERS), clean_new_source says so instead.
    if fields.get("kind") == Source.Kind.FOLDER and allowed_roots() and not may_add_folder(created_by):
        raise ValidationError({"kind": FOLDERS_FOR_STAFF})
    fields = clean_new_source(collection=collection, **fields)
    if created_by is not None and not created_by.is_staff and \
            Source.objects.filter(created_by=created_by).count() >= quotas.MAX_SOURCES_PER_USER:
        raise ValidationError(f"You have added {quotas.MAX_SOURCES_PER_USER} sources, the most one person may "
                              "keep; delete one first, or ask an administrator.")
    with transaction.atomic():
        try:
            with transaction.atomic():
                source = Source.objects.create(
                    collection=collection, created_by=created_by, **fields,
                    next_sync_at=None if fields["schedule"] == Source.Schedule.NONE else timezone.now())
        except IntegrityError:
            existing = existing_source(collection=collection, kind=fields["kind"], url=fields["url"],
                                       path=fields["path"])
            if existing is None:
                raise
            raise _already_there(existing) from None  # added by a concurrent request after the check
        audit.record(Action.SOURCE_ADDED, actor=created_by, target=source, request=request,
                     detail={"collection": collection.slug, "location": source.location})
        if sync:
            source_sync_enqueue(source=source)
    logger.info("added source %s to collection %s: %s", source.pk, collection.slug, source.location)
    return source


def clean_changes(*, current: Source | None = None, **fields) -> dict:
    """`fields` (any of CHANGEABLE) checked and normalised for source_update; the limits are checked
    together with `current`'s. ValidationError per field otherwise."""
    fixed = sorted(set(fields) - set(CHANGEABLE))
    if fixed:
        raise ValidationError({name: f"{name} cannot be changed: add another source instead." for name in fixed})
    _check_limits(fields.get("max_pages", current.max_pages if current else 1),
                  fields.get("max_depth", current.max_depth if current else 0))
    if "schedule" in fields:
        _check_schedule(fields["schedule"])
    if "tags" in fields:
        fields["tags"] = _clean_tags(fields["tags"])
    return fields


def source_update(*, source: Source, request=None, **fields) -> Source:
    """Change CHANGEABLE fields (clean_changes). New tags replace the source's old ones on its
    documents at once (tags set on a document by hand stay); a new schedule counts from the last
    sync (or now). A real change is audited, each field from what to what (`request`: who, from where)."""
    with transaction.atomic():
        locked = Source.objects.select_for_update().get(pk=source.pk)
        fields = clean_changes(current=locked, **fields)
        old_tags = list(locked.tags or [])
        tags_changed = "tags" in fields and fields["tags"] != old_tags
        # What really changed, from what to what (a form posts every field, most as they were).
        changed = {name: {"from": getattr(locked, name), "to": value} for name, value in fields.items()
                   if getattr(locked, name) != value}
        for name, value in fields.items():
            setattr(locked, name, value)
        if "schedule" in fields:
            locked.next_sync_at = locked.next_sync_after(locked.sync_finished_at or timezone.now())
        locked.save()
        if changed:
            audit.record(Action.SOURCE_CHANGED, target=locked, request=request, detail=changed)
        if tags_changed:
            for document in Document.objects.filter(source_link__source=locked):
                corpus_services.document_swap_tags(document=document, remove=old_tags, add=locked.tags)
    return locked


def source_delete(*, source: Source, request=None) -> int:
    """Delete the source and the documents it brought (their chunks and files); returns how many.
    Audited (`request`: who, from where)."""
    with transaction.atomic():
        audit.record(Action.SOURCE_DELETED, target=source, request=request,
                     detail={"collection": source.collection.slug, "location": source.location})
        # Only those still in its collection: one moved elsewhere (corpus.services.document_move) is
        # no longer the source's to delete (its editors may have no rights there); its link goes.
        documents = list(Document.objects.filter(source_link__source=source, collection=source.collection))
        for document in documents:
            corpus_services.document_delete(document=document)
        Source.objects.filter(pk=source.pk).delete()
    logger.info("deleted source %s with %s document(s)", source.pk, len(documents))
    return len(documents)


def source_sync_enqueue(*, source: Source):
    """Queue a sync of `source` after the current transaction commits (a sync already queued or
    running makes the new one a no-op: sources.sync's lock)."""
    from sources.tasks import sync_source_task

    Source.objects.filter(pk=source.pk).exclude(state=Source.State.SYNCING).update(state=Source.State.QUEUED)
    transaction.on_commit(lambda: sync_source_task.delay(source.pk))

