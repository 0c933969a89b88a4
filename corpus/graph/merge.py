"""Moving published chunks into the HNSW graph (`in_graph`), a small batch per transaction.

An UPDATE of in_graph is not HOT (the column is in the indexes' predicates): each row gets a new
version, entered in every index of corpus_chunk, the HNSW graph included (that insert is the work
taken out of the publish step). The same UPDATE gives the batch its BM25 postings (the postings
trigger, corpus 0017: a chunk has postings exactly when it is in the graph, also work taken out of
the publish step), inserted in the impact index's order; the statistics trigger returns at once
(corpus 0015: they were counted at publish).
Safe to run twice and side by side: one background merger at a time (a session advisory lock), rows
claimed with FOR UPDATE SKIP LOCKED, a chunk deleted meanwhile is simply not there.

Back-pressure (graph_make_room): publishing can outrun the merge (a publish step ~1,500 chunks/s at a
million chunks, the merge ~255), and every search scores the tail exactly. So before a document is
published, a tail over TAIL_LIMIT is merged down by the publisher itself, batch by batch, beside the
background merger: publishing then runs at the pace of the merge, the tail stays bounded, and no
publisher ever waits for a merger that may not be running.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.db import connection, transaction

# Rows per transaction: a publish deleting the same document's chunks waits at most one batch.
BATCH = 200
# Seconds one run merges before handing its worker back (the task queues the rest again).
RUN_SECONDS = 20.0
# The Celery priority of a merge (corpus.tasks.graph_merge_task): after the documents waiting to be
# built (priority 0: they are not searchable at all yet), before the sentence-vector fills
# (chat.receivers, 9): the tail is searchable already, exactly, and only costs the searches a little
# more until merged (kombu's Redis priority steps are 0, 3, 6, 9).
MERGE_PRIORITY = 6
# The tail a publish waits below (graph_make_room): searches score the tail exactly, and its cost grows
# with it (230-300 ms of keyword scoring at 20,000 chunks; docs/scaling.md, "A merge that keeps up",
# measures search p95 under a sustained upload with this bound). Below 5,000 with room for a document
# of 100 chunks from each of a few publishers at once.
TAIL_LIMIT = 4_000
# pg_try_advisory_lock key: "ragweb graph merge".
_LOCK_KEY = 0x72616777_6D657267 & 0x7FFF_FFFF_FFFF_FFFF


@dataclass(frozen=True)
class MergeRun:
    merged: int  # chunks moved into the graph
    left: int  # chunks still outside it when the run stopped
    seconds: float
    locked_out: bool = False  # another merger was running: this one did nothing


@dataclass(frozen=True)
class Room:
    merged: int  # chunks the publisher merged itself before publishing
    seconds: float  # how long it waited (merging)
    tail: int  # chunks outside the graph when it stopped


def graph_tail_size() -> int:
    """Chunks published but not yet in the HNSW graph."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM corpus_chunk WHERE NOT in_graph")
        return int(cursor.fetchone()[0])


def graph_merge_batch(*, batch: int = BATCH) -> int:
    """Move up to `batch` chunks outside the graph into it, in one transaction; how many moved."""
    with transaction.atomic(), connection.cursor() as cursor:
        # ORDER BY document_id reads the partial index chunk_graph_tail in order: documents are
        # merged whole, the oldest first.
        cursor.execute(
            "UPDATE corpus_chunk SET in_graph = true WHERE id = ANY(ARRAY("
            "SELECT id FROM corpus_chunk WHERE NOT in_graph ORDER BY document_id LIMIT %s FOR UPDATE SKIP LOCKED))",
            [int(batch)])
        return cursor.rowcount


def graph_merge(*, seconds: float = RUN_SECONDS, batch: int = BATCH) -> MergeRun:
    """Merge batches until nothing is outside the graph or `seconds` have passed (at least one
    batch; a batch started is finished). Returns at once, merging nothing, when another merger holds the lock."""
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [_LOCK_KEY])
        if not cursor.fetchone()[0]:
            return MergeRun(0, graph_tail_size(), time.perf_counter() - started, locked_out=True)
    merged = 0
    try:
        while True:
            moved = graph_merge_batch(batch=batch)
            merged += moved
            if moved < batch or time.perf_counter() - started >= seconds:
                break
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])
    return MergeRun(merged, graph_tail_size(), time.perf_counter() - started)


def graph_make_room(*, chunks: int, limit: int | None = None, batch: int = BATCH) -> Room:
    """Back-pressure before publishing `chunks` more outside the graph: merge batches here, the oldest
    first, until the tail plus them fits in `limit`. Stops early when the tail is empty (a document
    bigger than the limit is published alone) or when every chunk left is being merged by another
    merger at this moment (their batches are about to commit), so it never waits on anyone: the
    tail stays within `limit` (default TAIL_LIMIT) plus the documents being published at once (and,
    for a moment, the batches other mergers are committing). Each
    batch is its own transaction; call it outside the publishing one."""
    limit = TAIL_LIMIT if limit is None else limit
    started = time.perf_counter()
    merged = 0
    tail = graph_tail_size()
    while tail and tail + chunks > limit:
        moved = graph_merge_batch(batch=batch)
        if not moved:
            break
        merged += moved
        tail = graph_tail_size()
    return Room(merged, time.perf_counter() - started, tail)
