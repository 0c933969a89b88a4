"""Re-embedding a collection with EMBEDDING_MODEL: start, run (resumable), swap.

The run embeds, document by document in id order, every chunk that has no vector of the target
model yet and stores it (store.write skips chunks that already have one), so a run that is
interrupted and started again does only what is missing. Searches keep reading the collection's
current model (Collection.embedding_model) all along. When no chunk is missing, one transaction
holding the collection's row lock checks that again and switches embedding_model; publishing a
document takes a key-share lock on the same row (corpus.ingest.pipeline), so no document lands between
the check and the switch with only the old model's vectors. Documents published during the run are
embedded with the collection's model of the moment and caught up by the run before the switch.

One run at a time per collection (a session advisory lock); the Celery task runs it in slices of
corpus.tasks.REEMBED_SLICE_SECONDS, each queueing the next, so no delivery outlives the broker's
visibility timeout (which would hand the same message to a second worker).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from corpus.ingest import embed as embedding
from corpus.ingest.chunk_vectors import chunk_vectors
from corpus.ingest.pipeline import TRANSIENT_ERRORS, embedding_input
from corpus.models import Chunk, Collection, ReembedStatus
from corpus.reembed import store
from corpus.signals import collection_model_switched, send_on_commit

logger = logging.getLogger(__name__)

# Chunks embedded and written per batch (whole documents, so at least one document's): progress is recorded
# and a stopped run resumes per batch. A constant: it was a setting (REEMBED_BATCH_SIZE) with this default.
BATCH_CHUNKS = 256
# Advisory-lock namespace of re-embeds ("RGRE"); the second key is the collection's id.
LOCK_NAMESPACE = 0x52475245


def reembed_start(*, collection: Collection, model: str | None = None) -> bool:
    """Mark the collection to be re-embedded with `model` (default EMBEDDING_MODEL), progress
    reset. Returns False when there is nothing to do (already on that model, or already queued or
    running for it). corpus.services.collection_reembed also enqueues the work."""
    model = model or settings.EMBEDDING_MODEL
    with transaction.atomic():
        locked = Collection.objects.select_for_update().get(pk=collection.pk)
        if locked.embedding_model == model:
            return False
        if locked.reembed_model == model and locked.reembed_status in (ReembedStatus.QUEUED, ReembedStatus.RUNNING):
            return False
        locked.reembed_model = model
        locked.reembed_status = ReembedStatus.QUEUED
        locked.reembed_done = 0
        locked.reembed_total = Chunk.objects.filter(document__collection=locked).count()
        locked.reembed_started_at = timezone.now()
        locked.reembed_finished_at = None
        locked.reembed_error = ""
        locked.save(update_fields=["reembed_model", "reembed_status", "reembed_done", "reembed_total",
                                   "reembed_started_at", "reembed_finished_at", "reembed_error"])
    return True


def _vectors(collection: Collection, model: str, rows: list[tuple]) -> np.ndarray:
    """The model's vectors of the chunks `rows` (id, document_id, context, text), as
    corpus.ingest.chunk_vectors decides (per chunk, blended within each document)."""
    inputs = [embedding_input(context, text) for _, _, context, text in rows]
    return chunk_vectors(collection, model, inputs, documents=[document_id for _, document_id, _, _ in rows])


def _chunks_of(document_ids: list[int]) -> list[tuple]:
    return list(Chunk.objects.filter(document_id__in=document_ids).order_by("document_id", "chunk_index")
                .values_list("id", "document_id", "context", "text"))


class SliceOver(Exception):
    """The run's time slice is used up: the rest is for the next run (the task queues it)."""


def _embed_missing(collection: Collection, model: str, on_batch, deadline: float | None) -> None:
    """One pass over the collection's documents lacking the model's vectors, in batches of about
    BATCH_CHUNKS chunks (whole documents, for the neighbour blending). Raises SliceOver
    between batches once `deadline` (time.monotonic()) has passed; the first batch always runs,
    so every slice makes progress."""
    after = 0
    batches = 0
    while True:
        documents = store.documents_missing(model, collection.pk, after=after, limit=1000)
        if not documents:
            return
        batch: list[int] = []
        size = 0
        for document_id, chunks in documents:
            batch.append(document_id)
            size += chunks
            if size >= BATCH_CHUNKS or document_id == documents[-1][0]:
                if batches and deadline is not None and time.monotonic() >= deadline:
                    raise SliceOver
                rows = _chunks_of(batch)
                on_batch(store.write(model, [r[0] for r in rows], _vectors(collection, model, rows)))
                batch, size = [], 0
                batches += 1
        after = documents[-1][0]


@contextmanager
def _claimed(collection_id: int) -> Iterator[bool]:
    """The collection's re-embed lock (a session advisory lock: a killed worker's goes with its
    connection); yields whether this run holds it."""
    key = [LOCK_NAMESPACE, collection_id & 0x7FFFFFFF]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
        held = bool(cursor.fetchone()[0])
    try:
        yield held
    finally:
        if held:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)
            except DatabaseError:
                logger.warning("re-embed: could not release collection %s's lock; it goes with the connection",
                               collection_id)


def reembed_run(collection_id: int, *, seconds: float | None = None) -> str:
    """Re-embed the collection with its reembed_model, then switch to it. Safe to run twice, at
    once and after an interruption: one run at a time holds the collection (an advisory lock), and
    a run embeds only the chunks still without a vector of the model.

    Returns "missing", "idle" (nothing queued), "busy" (another run holds the collection), "more"
    (`seconds` ran out between two batches: run again for the rest), "done", "replaced" (another
    model was asked for meanwhile) or "failed" (recorded on the collection). TRANSIENT_ERRORS (the
    database or the broker gone for a moment) propagate for the caller to retry; the collection
    stays running and its vectors written so far are kept."""
    with _claimed(collection_id) as held:
        if not held:
            return "busy"
        return _run(collection_id, None if seconds is None else time.monotonic() + seconds)


def _run(collection_id: int, deadline: float | None) -> str:
    collection = Collection.objects.filter(pk=collection_id).first()
    if collection is None:
        logger.info("re-embed: collection %s no longer exists", collection_id)
        return "missing"
    model = collection.reembed_model
    if not model or collection.reembed_status not in (ReembedStatus.QUEUED, ReembedStatus.RUNNING):
        return "idle"
    Collection.objects.filter(pk=collection_id).update(reembed_status=ReembedStatus.RUNNING)
    try:
        probe = embedding.embed_texts(["dimension probe"], model=model)
        store.ensure_index(model, probe.shape[1])
        total = Chunk.objects.filter(document__collection_id=collection_id).count()
        done = total - store.count_missing(model, collection_id)
        Collection.objects.filter(pk=collection_id).update(reembed_total=total, reembed_done=done)

        def on_batch(written: int) -> None:
            nonlocal done
            done += written
            Collection.objects.filter(pk=collection_id, reembed_model=model).update(
                reembed_done=min(done, total), reembed_total=max(done, total))

        while True:
            try:
                _embed_missing(collection, model, on_batch, deadline)
            except SliceOver:
                return "more"
            outcome = _swap(collection_id, model)
            if outcome == "done":
                logger.info("re-embed: collection %s now searches %s", collection_id, model)
                # Nothing reads the previous model's side rows any more (the column's stay: a
                # column is not freed by emptying it, and a move back then costs only new chunks).
                store.drop(collection.embedding_model, collection_id)
            if outcome != "pending":
                return outcome
            # Documents were published meanwhile with the old model: catch them up.
    except TRANSIENT_ERRORS:
        raise  # retried by the task: nothing is wrong with the collection
    except Exception as exc:  # recorded for the operator; the collection keeps its old vectors
        logger.exception("re-embed of collection %s with %s failed", collection_id, model)
        reembed_fail(collection_id, f"{type(exc).__name__}: {exc}", model=model)
        return "failed"


def reembed_fail(collection_id: int, message: str, *, model: str | None = None) -> None:
    """Record the collection's re-embed (to `model`, when given) as failed with `message`."""
    rows = Collection.objects.filter(pk=collection_id, reembed_status__in=[ReembedStatus.QUEUED,
                                                                         ReembedStatus.RUNNING])
    if model is not None:
        rows = rows.filter(reembed_model=model)
    rows.update(reembed_status=ReembedStatus.FAILED, reembed_error=message[:2000], reembed_finished_at=timezone.now())


@transaction.atomic
def _swap(collection_id: int, model: str) -> str:
    """Switch the collection to `model` if none of its chunks lacks that model's vector ("done");
    the row lock keeps documents from being published in between (they take a key-share lock).
    "pending": some chunks still lack one; "replaced": a re-embed to another model took over."""
    locked = Collection.objects.select_for_update().get(pk=collection_id)
    if locked.reembed_model != model:
        return "replaced"
    if store.count_missing(model, collection_id):
        return "pending"
    total = Chunk.objects.filter(document__collection_id=collection_id).count()
    Collection.objects.filter(pk=collection_id).update(
        embedding_model=model, reembed_model="", reembed_status=ReembedStatus.DONE, reembed_done=total,
        reembed_total=total, reembed_finished_at=timezone.now())
    send_on_commit(collection_model_switched, collection_id=collection_id, model=model)
    return "done"
