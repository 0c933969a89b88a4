"""The sync engine: bring a source's documents in line with what the source holds now.

- Idempotent and incremental: an item whose validators (file mtime + size; ETag / Last-Modified)
  or content hash did not change is left alone; a second sync right after the first changes nothing.
- Documents are created and updated only through corpus.services.document_ingest (the one
  ingestion path: a changed document keeps its current chunks searchable until the new ones
  replace them in one transaction) and removed through corpus.services.document_delete, each item
  in a transaction with its SourceDocument link, so a document and its link never disagree.
- Items gone from the source (no longer listed, a file deleted, a page answering 404/410) have
  their documents removed. When the source as a whole cannot be read (SourceUnavailable), nothing
  is removed: an outage must not empty a collection.
- One sync of a source at a time: a Postgres advisory lock, held by the database session, so a
  worker that dies releases it with its connection. A second sync meanwhile returns at once (busy).
- The task's runs (`one_per_owner`): one sync per person at a time, whatever the number of their
  sources (another advisory lock, on the source's owner), so one person's slow sites (Crawl-delay)
  never hold every slot of the sources worker; their other syncs wait (`waiting`) and the task
  queues them again a little later. Operator sources (no owner) are not held to it.
- A sync writes in its owner's name only while they may write to the collection: checked before the
  run and again before every item (and before removing what is gone), so a run under way when they
  lose write access stops there, the source paused (sources.ownership, audited) with the round kept
  for whoever takes it over.
- A failing item is counted and listed with its reason; the others go on.
- A budget per run (the Celery task's; `manage.py sync_sources` has none): SYNC_SECONDS of wall
  clock and SYNC_ITEMS items. A round that does not fit goes on in the next run, which the task
  queues at once behind the other sources' syncs: where it stands (a crawl's frontier, or the items
  listed and how many were synced) is kept in Source.sync_round. Counts and failures add up over
  the round's runs; items gone from the source are removed only when the round is complete.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

import audit
from audit.models import Action
from corpus import services, uploads
from corpus.ingest.pipeline import TRANSIENT_ERRORS
from corpus.models import Document
from sources.kinds import Content, Item, ItemFailed, ItemGone, SourceUnavailable, Unchanged, kind_module
from sources.models import FAILURES_KEPT, Source, SourceDocument
from sources.ownership import sources_pause_unwritable

logger = logging.getLogger(__name__)

LOCK_CLASS = 29_000  # advisory lock namespace of source syncs (the second key is the source's id)
OWNER_LOCK_CLASS = 29_001  # ... and of one running sync per owner (the second key is the user's id)
Progress = Callable[[str, str], None]  # (outcome: new/changed/unchanged/removed/failed, item)
# A task's run of a sync: at most this long (then after the item under way: one fetch, at most
# sources.web.hops.RESPONSE_TIMEOUT plus a Crawl-delay), and at most a third of the broker's visibility timeout, so its
# message is acknowledged before Redis would hand it to a second worker; and at most SYNC_ITEMS
# items, so a big folder or sitemap does not put thousands of one person's documents in the
# ingestion queue at once.
SYNC_SECONDS = 60.0
SYNC_ITEMS = 200


def sync_slice_seconds() -> float:
    return min(SYNC_SECONDS, settings.CELERY_VISIBILITY_TIMEOUT / 3)


@dataclass
class SyncResult:
    """What one sync did. `busy`: another sync of the source was running, this one did nothing.
    `error`: the source could not be read at all (nothing was removed)."""

    new: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: int = 0
    failures: list[dict] = field(default_factory=list)
    error: str = ""
    busy: bool = False
    waiting: bool = False  # another sync of the source's owner was running: nothing done, run it later
    more: bool = False  # the run's budget ran out: the round goes on in the next run
    paused: bool = False  # its owner lost write access during the run: stopped, `error` says why
    round: dict = field(default_factory=dict)  # where the round stands (Source.sync_round); {} when complete

    @property
    def counts(self) -> dict[str, int]:
        return {"new": self.new, "changed": self.changed, "unchanged": self.unchanged, "removed": self.removed,
                "failed": self.failed}

    def add(self, outcome: str, item: str, reason: str = "") -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)
        if outcome == "failed" and len(self.failures) < FAILURES_KEPT:
            self.failures.append({"item": item[:2000], "reason": reason[:1000]})


def _try_lock(source_id: int, namespace: int = LOCK_CLASS) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [namespace, source_id])
        return bool(cursor.fetchone()[0])


def _unlock(source_id: int, namespace: int = LOCK_CLASS) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [namespace, source_id])


def source_sync(*, source_id: int, progress: Progress | None = None, seconds: float | None = None,
                items: int | None = None, one_per_owner: bool = False) -> SyncResult | None:
    """Sync the source `source_id` now, in this process; None if it no longer exists. With a
    budget (`seconds` of wall clock, `items` items), the run may stop before the round is done
    (`more`: run again to go on). With `one_per_owner`, a source whose owner has another sync
    running does nothing (`waiting`; it stays queued). The result is also recorded on the source
    (counts and failures, summed over the round's runs; error; next scheduled sync once the round
    is complete)."""
    if not _try_lock(source_id):
        return SyncResult(busy=True)
    source = None
    owner_locked = None
    try:
        source = Source.objects.select_related("collection", "created_by").filter(pk=source_id).first()
        if source is None:
            return None
        if one_per_owner and source.created_by_id is not None:
            if not _try_lock(source.created_by_id, OWNER_LOCK_CLASS):
                return SyncResult(waiting=True)
            owner_locked = source.created_by_id
        if source.paused_reason or sources_pause_unwritable(source_ids=[source_id]):
            # Its owner lost write access: it would write in their name (sources.services).
            Source.objects.filter(pk=source_id).update(state=Source.State.IDLE)
            return SyncResult(error=Source.objects.get(pk=source_id).paused_reason)
        started = timezone.now()
        resumed = bool(source.sync_round)
        Source.objects.filter(pk=source_id).update(
            state=Source.State.SYNCING, **({} if resumed else {"sync_started_at": started}))
        deadline = None if seconds is None else time.monotonic() + seconds
        result = _sync(source, progress or (lambda outcome, item: None), deadline=deadline, items=items)
        if resumed:  # the round's earlier runs count too
            result.new += source.last_new
            result.changed += source.last_changed
            result.unchanged += source.last_unchanged
            result.removed += source.last_removed
            result.failed += source.last_failed
            result.failures = (list(source.failures or []) + result.failures)[:FAILURES_KEPT]
        finished = timezone.now()
        if result.paused:
            # Stopped where it was, the round kept: whoever takes the source over goes on from there.
            ending = {"state": Source.State.IDLE}
        elif result.more:
            # Queued again by the task; next_sync_at now keeps beat from queueing it too (Source.objects.due).
            ending = {"state": Source.State.QUEUED, "next_sync_at": finished}
        else:
            ending = {"state": Source.State.FAILED if result.error else Source.State.IDLE,
                      "next_sync_at": source.next_sync_after(finished), "sync_finished_at": finished}
        Source.objects.filter(pk=source_id).update(
            **ending, error=result.error, sync_round=result.round, failures=result.failures,
            last_new=result.new, last_changed=result.changed, last_unchanged=result.unchanged,
            last_removed=result.removed, last_failed=result.failed)
        logger.info("source %s synced%s: %s%s", source_id, " (so far)" if result.more or result.paused else "",
                    result.counts, f" ({result.error})" if result.error else "")
        finished_round = not (result.more or result.paused)
        if finished_round and (result.error or result.new or result.changed or result.removed or result.failed):
            # A sync that found nothing new is not an event: scheduled syncs would flood the trail.
            audit.record(Action.SOURCE_SYNCED, target=source, detail={**result.counts, "error": result.error})
        return result
    except TRANSIENT_ERRORS:
        # A database or broker blip: the task retries; the round stays where it was.
        Source.objects.filter(pk=source_id, state=Source.State.SYNCING).update(state=Source.State.QUEUED)
        raise
    except BaseException as exc:
        # Shown as failed with the reason, never left "syncing" (nor "idle", which would hide it);
        # due again at its next scheduled time, not at the next beat tick (a crash would repeat each minute).
        # The round starts over then: an item that crashes the sync must not stop every later round there.
        stopped = timezone.now()
        changes = {"state": Source.State.FAILED, "error": stopped_reason(exc), "sync_finished_at": stopped,
                   "sync_round": {}}
        if source is not None:
            changes["next_sync_at"] = source.next_sync_after(stopped)
        Source.objects.filter(pk=source_id, state=Source.State.SYNCING).update(**changes)
        raise
    finally:
        if owner_locked is not None:
            _unlock(owner_locked, OWNER_LOCK_CLASS)
        _unlock(source_id)


def stopped_reason(exc: BaseException) -> str:
    """The message a source shows after its sync stopped on an unexpected error `exc`."""
    return f"The sync stopped on an unexpected error ({type(exc).__name__}: {str(exc)[:300]}); nothing was removed " \
           "after it. Sync again; if it keeps failing, the server's log has the details."


def sources_mark_lost() -> list[int]:
    """Mark failed the sources shown as syncing whose sync is not running: no session holds their
    advisory lock, so the worker running it died (killed, out of memory, the machine restarted).
    Returns their ids. Safe beside running syncs: a running sync holds its lock the whole time."""
    lost = []
    for pk in Source.objects.filter(state=Source.State.SYNCING).values_list("pk", flat=True):
        if not _try_lock(pk):
            continue  # its sync is running
        try:
            if Source.objects.filter(pk=pk, state=Source.State.SYNCING).update(
                    state=Source.State.FAILED, sync_finished_at=timezone.now(),
                    error="The sync stopped before it finished (its worker was stopped); it runs again at the "
                          "next scheduled time, or sync now."):
                lost.append(pk)
        finally:
            _unlock(pk)
    if lost:
        logger.warning("sources %s were left syncing by a worker that stopped: marked failed", lost)
    return lost


def _sync(source: Source, progress: Progress, *, deadline: float | None, items: int | None) -> SyncResult:
    result = SyncResult()
    kind = kind_module(source.kind)
    round_ = dict(source.sync_round or {})
    if "items" not in round_:
        try:
            listing = kind.list_items(source, deadline=deadline, resume=round_.get("listing"))
        except SourceUnavailable as exc:
            result.error = str(exc)
            return result
        if listing.resume is not None:  # the listing itself ran out of time (a crawl): go on next run
            result.more, result.round = True, {"listing": listing.resume}
            return result
        # Notices beside the failures, not failed items: nothing went wrong with any one of them.
        notes = list(listing.notes)
        if listing.truncated:
            notes.append(f"more than {source.max_pages} pages or files: the first {source.max_pages} are kept "
                         "(raise max_pages to keep more)")
        round_ = {"items": [[item.key, item.source] for item in listing.items], "done": 0, "notes": notes,
                  "skipped": [[key, reason] for key, reason in listing.skipped]}
    listed = [Item(key, name) for key, name in round_["items"]]
    links = {link.key: link for link in SourceDocument.objects.filter(source=source)}
    handled = 0
    for position in range(round_["done"], len(listed)):
        if handled and ((deadline is not None and time.monotonic() >= deadline) or
                        (items is not None and handled >= items)):
            result.more, result.round = True, {**round_, "done": position}
            return result
        reason = _paused(source)
        if reason:
            result.paused, result.error, result.round = True, reason, {**round_, "done": position}
            return result
        item = listed[position]
        outcome, reason = _sync_item(source, kind, item, links.get(item.key))
        result.add(outcome, item.key, reason)
        progress(outcome, item.key)
        handled += 1
    reason = _paused(source)
    if reason:  # nothing is removed in the name of someone who may no longer write
        result.paused, result.error, result.round = True, reason, {**round_, "done": len(listed)}
        return result
    keys = {item.key for item in listed}
    for key, link in links.items():
        if key not in keys:
            _remove(link)
            result.add("removed", key)
            progress("removed", key)
    for note in round_["notes"][:FAILURES_KEPT - len(result.failures)]:
        result.failures.append({"item": source.location[:2000], "reason": note[:1000]})
    # Kept with the round: a round resumed in a later run has no listing of its own.
    for key, reason in round_.get("skipped", [])[:max(0, FAILURES_KEPT - len(result.failures))]:
        result.failures.append({"item": key[:2000], "reason": reason[:1000]})
    return result


def _paused(source: Source) -> str:
    """Why the sync must stop now ("": it goes on): the source was paused or deleted meanwhile, or its
    owner may no longer write to its collection (then it is paused now, audited: no signal told of
    every way to lose access). A take-over meanwhile makes the new owner the one it writes for."""
    sources_pause_unwritable(source_ids=[source.pk])
    current = Source.objects.select_related("created_by").filter(pk=source.pk).first()
    if current is None:
        return "The source was deleted during the sync."
    if current.paused_reason:
        return current.paused_reason
    source.created_by = current.created_by
    return ""


def _sync_item(source: Source, kind, item: Item, link: SourceDocument | None) -> tuple[str, str]:
    """(outcome, reason) of one item: new, changed, unchanged, removed or failed."""
    try:
        got = kind.read_item(source, item, link)
    except ItemGone:
        if link is None:
            return "failed", "not found"
        _remove(link)
        return "removed", ""
    except ItemFailed as exc:
        return "failed", str(exc)
    if isinstance(got, Unchanged):
        if link is not None:
            _save_validators(link, got.validators)
            return "unchanged", ""
        return "failed", "the server answered 'not modified' to a first request"
    return _ingest(source, item, link, got)


def _ingest(source: Source, item: Item, link: SourceDocument | None, content: Content) -> tuple[str, str]:
    refused = uploads.upload_error(content.filename, len(content.data))
    if refused:
        return "failed", refused
    content_hash = hashlib.sha256(content.data).hexdigest()
    if link is not None and link.content_hash == content_hash and Document.objects.filter(
            pk=link.document_id, content_hash=content_hash).exists():
        _save_validators(link, content.validators)
        return "unchanged", ""
    with transaction.atomic():
        taken = (Document.objects.filter(collection=source.collection, source=item.source)
                 .exclude(source_link__source=source).exists())
        if taken:
            return "failed", (f"the collection already has a document {item.source!r} (uploaded, or from another "
                              "source); it is left as it is")
        try:
            document = services.document_ingest(collection=source.collection, source=item.source,
                                                data=content.data, filename=content.filename,
                                                uploaded_by=source.created_by, tags=list(source.tags or []))
        except (ValidationError, ValueError) as exc:
            return "failed", "; ".join(getattr(exc, "messages", None) or [str(exc)])
        SourceDocument.objects.update_or_create(
            source=source, key=item.key,
            defaults={"document": document, "content_hash": content_hash, **_validator_fields(content.validators)})
    if document.status == Document.Status.FAILED and document.error:
        return "failed", document.error
    return ("changed" if link is not None else "new"), ""


def _validator_fields(validators: dict) -> dict:
    return {name: validators[name] for name in ("etag", "last_modified", "mtime_ns", "size") if name in validators}


def _save_validators(link: SourceDocument, validators: dict) -> None:
    fields = _validator_fields(validators)
    if fields:
        SourceDocument.objects.filter(pk=link.pk).update(**fields, synced_at=timezone.now())


def _remove(link: SourceDocument) -> None:
    """The item is gone: its document goes too, unless it was moved out of the source's collection
    (then it is no longer the source's: only the link goes)."""
    document = Document.objects.filter(pk=link.document_id, collection_id=link.source.collection_id).first()
    if document is not None:
        services.document_delete(document=document)  # the link goes with it (cascade)
    else:
        SourceDocument.objects.filter(pk=link.pk).delete()
