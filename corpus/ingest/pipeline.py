"""Processing one document: parse → chunk → contextualize → embed → publish.

Safe to run twice, and concurrently: a Postgres advisory lock (held by the session, so it dies
with a killed worker's connection) lets one run work on a document at a time; a run finding the
document already built from its current content and settings does nothing. Chunks are built in
memory and published in one transaction (old chunks deleted, new ones inserted, document marked
ready), so a search sees the old chunks or the new ones, never a mix. Status and progress are
written as they change, in their own small committed updates, for the admin and `ingest --wait`.

Each of those updates also checks that the run is still wanted: a document deleted or given new
content meanwhile stops the run there (between stages, and between embedding batches), so the
worker moves on to the next document instead of finishing work nobody will see. A document would
make more than MAX_CHUNKS_PER_DOCUMENT chunks fails with a message before anything is embedded.

A document left in progress by a worker that died holds no lock any more: stalled_document_ids()
finds such documents at once (no waiting for the broker's visibility timeout), and
requeue_stalled() puts them back in the queue; a new worker calls it when it starts, and enqueues
the queued documents again too (queued_document_ids), in case the broker lost their messages.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath

import kombu.exceptions
import numpy as np
import redis.exceptions
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from corpus.graph.merge import graph_make_room
from corpus.ingest import embed as embedding
from corpus.ingest.chunk import ChunkingConfig, TooManyChunks, chunk_text, heading_paths
from corpus.ingest.chunk_vectors import chunk_vectors
from corpus.ingest.contextualize import contextualize
from corpus.ingest.parse import ParseError, parse_document
from corpus.ingest.parse.base import page_number
from corpus.ingest.tokens import count_tokens, tokenize
from corpus.locks import document_for_update
from corpus.metadata import build_metadata
from corpus.models import IN_PROGRESS, Chunk, Collection, Document
from corpus.reembed import store as reembed_store
from corpus.signals import document_published, send_on_commit

logger = logging.getLogger(__name__)

Status = Document.Status

# Worth a retry later: the database or the broker went away for a moment.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    OperationalError, InterfaceError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
    kombu.exceptions.OperationalError,
)
# Advisory-lock namespace ("RAGD"), so document ids cannot collide with other users of advisory locks.
LOCK_NAMESPACE = 0x52414744
INSERT_BATCH = 500
# A document that would make more chunks fails before anything is embedded: at ~21 chunks/s on 2 cores
# (docs/scaling.md) 20,000 chunks are ~16 min of a worker, and MAX_DOCUMENT_CHARS of text in 800-character
# chunks stays under it. A bound on one document's cost, not a deployment choice.
MAX_CHUNKS_PER_DOCUMENT = 20_000



class DocumentBusy(Exception):
    """Another live worker is processing this document; try again later."""


class Cancelled(Exception):
    """The document was deleted ("missing") or got new content ("superseded") while being built."""

    def __init__(self, outcome: str) -> None:
        super().__init__(outcome)
        self.outcome = outcome


@dataclass(frozen=True)
class Built:
    """A document's new chunks and fields, ready to be published."""

    content_hash: str
    signature: str
    title: str
    text: str
    media_type: str
    author: str
    created: datetime | None  # the file's own dates, when its format states them
    modified: datetime | None
    pages: list[int]
    summary: str
    chunks: list[Chunk]
    model: str  # the embedding model of the chunks' vectors (Collection.embedding_model when built)
    inputs: list[str]  # what was embedded per chunk, to embed again if the collection switched model


@contextmanager
def document_lock(document_id: int) -> Iterator[bool]:
    """Try to take the session-level advisory lock of a document; yields whether it was taken."""
    key = [LOCK_NAMESPACE, document_id & 0x7FFFFFFF]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
        acquired = bool(cursor.fetchone()[0])
    try:
        yield acquired
    finally:
        if acquired:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)
            except DatabaseError:
                logger.warning("could not release the lock of document %s; it goes with the connection", document_id)


def stalled_document_ids() -> list[int]:
    """Documents shown in progress that no live run holds the lock of: their worker died.

    The lock goes with the dead worker's database session, so this is known at once. (A run that
    hit a temporary error and waits for its retry is listed too; requeueing it only brings the
    retry forward.)"""
    in_progress = list(Document.objects.filter(status__in=IN_PROGRESS).values_list("pk", flat=True))
    if not in_progress:
        return []
    with connection.cursor() as cursor:
        # A two-key advisory lock shows its keys as classid and objid, with objsubid 2.
        cursor.execute("SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND classid = %s "
                       "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                       "AND granted", [LOCK_NAMESPACE])
        locked = {int(row[0]) for row in cursor.fetchall()}
    return [pk for pk in in_progress if (pk & 0x7FFFFFFF) not in locked]


def requeue_stalled() -> list[int]:
    """Put the stalled documents (see stalled_document_ids) back to "queued"; returns their ids,
    for the caller to enqueue. A document whose run took the lock meanwhile is left alone by the
    run itself: its claim finds the work in progress or done."""
    ids = stalled_document_ids()
    if ids:
        Document.objects.filter(pk__in=ids, status__in=IN_PROGRESS).update(
            status=Status.QUEUED, progress_done=0, progress_total=0, updated_at=timezone.now())
        logger.info("requeued %s document(s) left in progress by a worker that died: %s", len(ids), ids)
    return ids


def queued_document_ids() -> list[int]:
    """Documents waiting in the queue. Enqueueing them again is safe (a run of an up-to-date
    document does nothing) and recovers a message the broker lost or never got (an upload while
    it was down)."""
    return list(Document.objects.filter(status=Status.QUEUED).order_by("pk").values_list("pk", flat=True))


def process_document(document_id: int) -> str:
    """Build and publish the chunks of one document. Returns what happened: "ready", "failed",
    "unchanged" (already built), "missing" (deleted) or "superseded" (new content arrived meanwhile).

    Raises DocumentBusy if another run holds the document, and TRANSIENT_ERRORS for the caller to retry.
    """
    with document_lock(document_id) as acquired:
        if not acquired:
            raise DocumentBusy(f"document {document_id} is being processed by another worker")
        document = _claim(document_id)
        if isinstance(document, str):
            return document
        content_hash = document.content_hash
        try:
            built = _build(document)
        except TRANSIENT_ERRORS:
            raise
        except Cancelled as exc:
            logger.info("document %s %s while being processed; stopped", document_id,
                        "was deleted" if exc.outcome == "missing" else "got new content")
            return exc.outcome
        except (ParseError, TooManyChunks) as exc:
            return _fail(document_id, content_hash, str(exc))
        except Exception as exc:
            logger.exception("processing document %s failed", document_id)
            return _fail(document_id, content_hash, f"Processing failed: {exc}")
        return publish(document_id, built)


def publish(document_id: int, built: Built) -> str:
    """Publish a built document, first merging the HNSW graph's tail down below its bound when it is
    over (corpus.graph.merge.graph_make_room: publishing paced to the merge); what _publish returns."""
    room = graph_make_room(chunks=len(built.chunks))
    if room.merged:
        logger.info("document %s waited %.1f s for the graph merge: merged %s chunks itself, %s left outside "
                    "the graph", document_id, room.seconds, room.merged, room.tail)
    return _publish(document_id, built)


def _claim(document_id: int) -> Document | str:
    with transaction.atomic():
        document = (Document.objects.select_for_update(of=("self",)).select_related("collection")
                    .filter(pk=document_id).first())
        if document is None:
            logger.info("document %s no longer exists", document_id)
            return "missing"
        if document.is_current():
            return "unchanged"
        if document.status == Status.FAILED and document.error and not document.file:
            return "failed"  # refused at upload (e.g. too large): nothing to process
        if document.status in IN_PROGRESS:
            logger.info("document %s was left %s by a lost worker; starting it again", document_id,
                        document.status)
        document.status = Status.PARSING
        document.error = ""
        document.progress_done = document.progress_total = 0
        document.save(update_fields=["status", "error", "progress_done", "progress_total", "updated_at"])
    return document


def _progress(document_id: int, content_hash: str, **fields) -> None:
    """A committed status/progress update; raises Cancelled if the document was deleted or got new
    content meanwhile (then there is nothing to update, and nothing left worth doing)."""
    updated = Document.objects.filter(pk=document_id, content_hash=content_hash).update(
        **fields, updated_at=timezone.now())
    if not updated:
        exists = Document.objects.filter(pk=document_id).exists()
        raise Cancelled("superseded" if exists else "missing")


def _read(document: Document) -> bytes:
    if not document.file:
        raise ParseError("The document has no stored file; upload it again.")
    try:
        size = document.file.size
        if size > settings.MAX_UPLOAD_BYTES:
            raise ParseError(f"The file is {size / 1e6:.1f} MB; the limit is {settings.MAX_UPLOAD_BYTES / 1e6:.1f} MB.")
        with document.file.open("rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise ParseError("The stored file is missing; upload it again.") from None


def _filename(document: Document) -> str:
    """The name the parser should judge the type by: the stored file's (named for what its bytes
    are), else the source's. A web page is stored as Markdown ("page.md") under its URL, which may
    end in ".html": judged by the URL it was read as HTML, its lines run together and its title lost."""
    stored = PurePosixPath(document.file.name).name
    if PurePosixPath(stored).suffix:
        return stored
    return PurePosixPath(document.source.split("?", 1)[0]).name or stored


def _build(document: Document) -> Built:
    collection: Collection = document.collection
    signature = collection.pipeline_signature()
    document_id = document.pk

    data = _read(document)
    content_hash = hashlib.sha256(data).hexdigest()
    # Typed by the stored file's name, titled by the source's: the storage name may carry Django's
    # suffix ("setup_4wEfB12.txt") and is no name the person gave it.
    parsed = parse_document(data, filename=_filename(document), name=document.source,
                            on_progress=lambda done, total: _progress(
                                document_id, document.content_hash, progress_done=done, progress_total=total))
    text = parsed.text
    title = parsed.title.strip()[:500]

    _progress(document_id, document.content_hash, status=Status.CHUNKING)
    config = ChunkingConfig(strategy=collection.chunker, size=collection.chunk_size,
                            overlap=collection.chunk_overlap, threshold=collection.semantic_threshold)
    spans = chunk_text(text, config, headings=parsed.headings, embed=embedding.embed_texts,
                       max_chunks=MAX_CHUNKS_PER_DOCUMENT)
    _check_spans(spans, text, overlapping=collection.overlapping)
    paths = heading_paths(parsed.headings, [span.heading_at for span in spans])
    chunk_texts = [text[span.start: span.end] for span in spans]

    _progress(document_id, document.content_hash, status=Status.CONTEXTUALIZING)
    result = contextualize(mode=collection.contextualization, title=title, text=text, chunk_texts=chunk_texts,
                           heading_paths=paths)

    n = len(spans)
    _progress(document_id, document.content_hash, status=Status.EMBEDDING, progress_done=0, progress_total=n)
    model = collection.embedding_model
    inputs = [embedding_input(c, t) for c, t in zip(result.contexts, chunk_texts, strict=True)]

    def late() -> np.ndarray:
        late_vectors = embedding.late_chunk_embeddings(
            text, [(span.start, span.end) for span in spans], tokens=tokenize(text),
            prefix=result.llm_title or title,
            on_progress=lambda done: _progress(document_id, document.content_hash, progress_done=done))
        _progress(document_id, document.content_hash, progress_done=n)
        return late_vectors

    vectors = chunk_vectors(collection, model, inputs, late=late,
                            embed=lambda texts: _embed_plain(document_id, document.content_hash, texts, model=model))

    pages = list(parsed.pages)
    chunks = [
        Chunk(document_id=document_id, chunk_index=i, text=chunk_texts[i], start=span.start, end=span.end,
              heading_path=" > ".join(paths[i]), context=result.contexts[i],
              page=page_number(pages, span.start), token_count=count_tokens(chunk_texts[i]),
              embedding=vectors[i])
        for i, span in enumerate(spans)
    ]
    return Built(content_hash=content_hash, signature=signature, title=title, text=text,
                 media_type=parsed.media_type, author=parsed.author, created=parsed.created,
                 modified=parsed.modified, pages=pages, summary=result.summary, chunks=chunks, model=model,
                 inputs=inputs)


def embedding_input(context: str, text: str) -> str:
    """What gets embedded for a chunk: its context header, a blank line, its text."""
    return f"{context}\n\n{text}" if context else text


def _embed_plain(document_id: int, content_hash: str, inputs: list[str], *, model: str | None = None) -> np.ndarray:
    """Embed batch by batch, reporting progress after each batch actually embedded. Inputs are
    sorted longest first, as encode() sorts them itself, so the batches (and the padding) are the
    ones one encode() call over all of them would make."""
    order = sorted(range(len(inputs)), key=lambda i: -len(inputs[i]))
    group = settings.EMBEDDING_BATCH_SIZE
    vectors = None
    for offset in range(0, len(order), group):
        indices = order[offset: offset + group]
        batch = embedding.embed_texts([inputs[i] for i in indices], model=model)
        if vectors is None:  # the model's own dimension
            vectors = np.zeros((len(inputs), batch.shape[1]), dtype=np.float32)
        vectors[indices] = batch
        _progress(document_id, content_hash, progress_done=min(offset + group, len(order)))
    return vectors


def _collection_model_shared(collection_id: int) -> str:
    """The collection's embedding model, its row locked FOR KEY SHARE until the transaction ends:
    the weakest lock that still conflicts with the re-embed's FOR UPDATE at the switch, so it holds
    up no other write to the row (progress counters, renames) and no other publish."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT embedding_model FROM corpus_collection WHERE id = %s FOR KEY SHARE",
                       [collection_id])
        return cursor.fetchone()[0]


def _vectors_for_model(built: Built, model: str, collection: Collection) -> np.ndarray | None:
    """Put the built chunks' vectors where `model` keeps them: in Chunk.embedding for the column
    model (returns None), else returned for corpus_chunkvector (Chunk.embedding left empty). A
    collection that switched model since the build gets its chunks embedded again, per chunk."""
    vectors = np.asarray([c.embedding for c in built.chunks], dtype=np.float32)
    if model != built.model:
        vectors = chunk_vectors(collection, model, built.inputs)
    in_column = reembed_store.in_column(model)
    for chunk, vector in zip(built.chunks, vectors, strict=True):
        chunk.embedding = vector if in_column else None
    return None if in_column else vectors


def _check_spans(spans, text: str, *, overlapping: bool) -> None:
    """Guard the invariant RSE relies on before anything is stored."""
    if not spans:
        raise ParseError("The document has no text to index.")
    if overlapping:
        return
    position = 0
    for span in spans:
        if span.start != position or span.end <= span.start:
            raise RuntimeError(f"the chunker returned spans that do not tile the text at offset {position}")
        position = span.end
    if position != len(text):
        raise RuntimeError("the chunker's spans do not reach the end of the text")


def _publish(document_id: int, built: Built) -> str:
    with transaction.atomic():
        # The collection's row (FOR KEY SHARE), then the document's: corpus.locks' LOCK ORDER.
        document = document_for_update(document_id)
        if document is None:
            return "missing"
        if document.content_hash != built.content_hash:
            logger.info("document %s got new content while processing; leaving it to the next run", document_id)
            return "superseded"
        Chunk.objects.filter(document_id=document_id).delete()
        # A key-share lock on the collection: a re-embed switches its model under FOR UPDATE, so the
        # model read here stays the collection's until this commits (corpus.reembed.services).
        model = _collection_model_shared(document.collection_id)
        store_vectors = _vectors_for_model(built, model, document.collection)
        Chunk.objects.bulk_create(built.chunks, batch_size=INSERT_BATCH)
        if store_vectors is not None:
            reembed_store.write(model, [c.pk for c in built.chunks], store_vectors)
        document.title = built.title
        document.text = built.text
        document.media_type = built.media_type
        now = timezone.now()
        # The tags are people's (PATCH /api/documents/{id}/): read under the row lock, kept.
        document.metadata = build_metadata(
            source=document.source, media_type=built.media_type, title=built.title, author=built.author,
            created=built.created or document.created_at, modified=built.modified or built.created or now,
            tags=(document.metadata or {}).get("tags", []))
        document.pages = built.pages
        document.summary = built.summary
        document.status = Status.READY
        document.error = ""
        document.progress_done = document.progress_total = len(built.chunks)
        document.built_hash = built.content_hash
        document.built_signature = built.signature
        document.ingested_at = now
        document.save()
        send_on_commit(document_published, document_id=document_id)
    logger.info("document %s ready: %s chunks", document_id, len(built.chunks))
    return "ready"


def _fail(document_id: int, content_hash: str, message: str) -> str:
    """Record a permanent failure; the chunks of an earlier build, if any, stay as they were."""
    logger.info("document %s failed: %s", document_id, message)
    Document.objects.filter(pk=document_id, content_hash=content_hash).update(
        status=Status.FAILED, error=message[:2000], progress_done=0, progress_total=0, updated_at=timezone.now())
    return "failed"


def mark_failed(document_id: int, message: str) -> None:
    """Give up on a document (e.g. after the task ran out of retries)."""
    Document.objects.filter(pk=document_id).exclude(status=Status.READY).update(
        status=Status.FAILED, error=message[:2000], progress_done=0, progress_total=0, updated_at=timezone.now())
