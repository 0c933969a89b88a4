"""A sustained upload against the table as it is: does the graph merge keep up, and what do searches pay?

For a fixed time, `publishers` threads publish fresh synthetic documents (chat.evaluation.synthetic_corpus,
100 chunks each, already embedded) through the ingestion pipeline's publish path: `pipeline.publish`, which
first merges the graph's tail down below its bound (corpus.graph.merge.graph_make_room), or with
paced=False the bare publish step, as before the bound. Beside them, one background merger does what the
Celery task corpus.graph_merge does (graph_merge runs, one after the other while there is a tail), and one
client, a process of its own as a web process is, searches (hybrid, k=10, RSE balanced) the given questions in
turn. Every interval gives one Interval:
chunks published and merged per second, the tail (its size at the end and the most seen, sampled each
second) and the searches' latencies. Merged = published minus the tail's growth, whoever merged them (the
background merger or the publishers themselves); `by_publishers` is the publishers' share.

The published documents stay (their chunks merged or in the tail) for the caller to delete.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from django.db import connection, connections
from django.db.models import QuerySet

from chat.evaluation import search_client
from chat.evaluation.synthetic_corpus import Bases, fresh_documents
from corpus.graph.merge import graph_merge, graph_tail_size
from corpus.ingest import pipeline
from corpus.models import Collection
from lib import priority

READY_SECONDS = 300  # the search client's start: Django and the embedding model, on a busy machine
IDLE_SECONDS = 0.5  # the merger's pause when there is no tail (the task would wait for the next publish)


@dataclass
class Interval:
    end: float  # seconds since the start
    seconds: float
    published: int  # chunks published in the interval
    merged: int  # chunks that entered the graph in it
    by_publishers: int  # of those, merged by the publishers themselves (back-pressure)
    tail: int  # chunks outside the graph at its end
    tail_max: int  # the most seen in it
    latencies: list[float] = field(default_factory=list)  # its searches, ms


@dataclass
class _Counters:
    lock: threading.Lock = field(default_factory=threading.Lock)
    published: int = 0
    background: int = 0  # chunks the background merger merged
    documents: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)


def run(*, collection: Collection, searched: QuerySet[Collection], bases: Bases, questions: list[str], seconds: float,
        interval: float, publishers: int, paced: bool, seed: int, report: Callable[[Interval], None],
        nice: int | None = None) -> tuple[list[Interval], list[int]]:
    """Upload for `seconds`, calling `report` with each Interval as it ends; (the intervals, the ids of the
    documents published). With `nice`, the publishers and the merger (threads and Postgres backends) run at
    that nice value (lib.priority), the client at its own. Raises the first error a thread met,
    after stopping them all."""
    stop = threading.Event()
    counters = _Counters()

    def guarded(work: Callable[[], None], *, background: bool = True) -> Callable[[], None]:
        def target() -> None:
            try:
                if background and nice is not None:
                    priority.lower_this_thread(nice)
                    connection.ensure_connection()
                    if not priority.lower_backend(connection.connection, nice):
                        raise RuntimeError("could not lower the Postgres backend's priority (not a local server?)")
                work()
            except BaseException as exc:  # noqa: BLE001 — handed to the main thread, which raises it
                with counters.lock:
                    counters.errors.append(exc)
                stop.set()
            finally:
                connections.close_all()  # this thread's own
        return target

    def publisher(n: int) -> Callable[[], None]:
        rng = np.random.default_rng(seed + n)

        def work() -> None:
            while not stop.is_set():
                [(document, built)] = fresh_documents(collection, bases, rng, 1)
                with counters.lock:
                    counters.documents.append(document.pk)
                (pipeline.publish if paced else pipeline._publish)(document.pk, built)
                with counters.lock:
                    counters.published += len(built.chunks)
        return work

    def merger() -> None:
        # The task's graph_merge, a batch a call (seconds=0) so that its count is exact per interval and it
        # stops promptly; the task holds the lock for 20 s of batches instead, which merges no faster.
        while not stop.is_set():
            merged = graph_merge(seconds=0.0).merged
            with counters.lock:
                counters.background += merged
            if not merged:
                stop.wait(IDLE_SECONDS)

    context = multiprocessing.get_context("spawn")
    ready, halt, results = context.Event(), context.Event(), context.Queue()
    client = context.Process(target=search_client.run, args=(
        connection.settings_dict["NAME"], list(searched.values_list("pk", flat=True)), questions, ready, halt, results))

    def collector() -> None:
        """The client's latencies into the counters, until it has stopped and sent everything."""
        while True:
            try:
                kind, value = results.get(timeout=0.2)
            except queue.Empty:
                if not client.is_alive():
                    return
                continue
            if kind == "error":
                raise RuntimeError(f"the search client failed: {value}")
            if kind == "done":
                return
            with counters.lock:
                counters.latencies.append(value)

    client.start()
    try:
        if not ready.wait(READY_SECONDS):
            raise RuntimeError(f"the search client was not ready in {READY_SECONDS} s")
    except BaseException:
        halt.set()
        client.join(10)
        client.kill()
        raise
    threads = [threading.Thread(target=guarded(publisher(n))) for n in range(publishers)]
    threads += [threading.Thread(target=guarded(merger)), threading.Thread(target=guarded(collector, background=False))]
    intervals: list[Interval] = []
    tail = graph_tail_size()
    mark = {"at": time.perf_counter(), "published": 0, "background": 0, "tail": tail, "tail_max": tail}
    started = mark["at"]

    def close_interval() -> None:
        """The interval since the last mark, reported; the next starts now."""
        now, tail = time.perf_counter(), graph_tail_size()
        with counters.lock:
            published, background, latencies = counters.published, counters.background, counters.latencies
            counters.latencies = []
        merged = (published - mark["published"]) - (tail - mark["tail"])
        step = Interval(end=now - started, seconds=now - mark["at"], published=published - mark["published"],
                        merged=merged, by_publishers=max(0, merged - (background - mark["background"])),
                        tail=tail, tail_max=max(mark["tail_max"], tail), latencies=latencies)
        intervals.append(step)
        report(step)
        mark.update(at=now, published=published, background=background, tail=tail, tail_max=tail)

    for thread in threads:
        thread.start()
    try:
        while not stop.is_set() and time.perf_counter() - started < seconds:
            stop.wait(1.0)
            mark["tail_max"] = max(mark["tail_max"], graph_tail_size())
            now = time.perf_counter()
            if now - mark["at"] >= interval and now - started < seconds:  # the last one is closed below
                close_interval()
    finally:
        stop.set()
        halt.set()
        for thread in threads:
            thread.join()
        client.join(30)
        if client.is_alive():
            client.kill()
    if counters.errors:
        raise counters.errors[0]
    # The last interval ends once every thread has finished what it had begun (a publish under way), so that
    # everything published is counted.
    close_interval()
    return intervals, counters.documents

