"""Ingestion with two real Celery workers taking tasks from the same queue: every document is
built once, by one of them, and both take part (docs/scaling.md measures the speed-up)."""

from __future__ import annotations

import re
import time

import pytest

from corpus import services
from corpus.models import Chunk, Collection, Document
from tests.workers import start_worker, stop_worker

FILES = 10


def _text(n: int) -> bytes:
    paragraphs = [f"Section {p} of report {n}. " + " ".join(f"Finding {n}.{p}.{s} concerns item {s * n}."
                                                              for s in range(40)) for p in range(4)]
    return "\n\n".join(paragraphs).encode()


def _built(worker) -> int:
    """Runs of the task that built a document. A second message for a document already built is
    allowed (a worker that starts enqueues the queued documents again) and ends "unchanged"."""
    return len(re.findall(r"corpus\.process_document\[[^\]]+\] succeeded in [0-9.e-]+s: 'ready'",
                          worker.log.read_text()))


@pytest.mark.slow  # two real worker processes build a batch to its end: make test-slow
@pytest.mark.django_db(transaction=True)
def test_two_workers_share_the_queue_and_build_each_document_exactly_once(settings):
    # Each builds two documents at once, as `make run`'s worker does (two pool processes).
    workers = [start_worker(settings, name=f"pair{n}", concurrency=2) for n in range(2)]
    try:
        collection = Collection.objects.create(slug="two-workers", name="Two workers", chunk_size=64)
        for n in range(FILES):
            services.document_ingest(collection=collection, source=f"report-{n}.txt", data=_text(n),
                                     filename=f"report-{n}.txt")
        deadline = time.monotonic() + 240
        while Document.objects.filter(collection=collection, status=Document.Status.READY).count() < FILES:
            assert time.monotonic() < deadline, list(Document.objects.values_list("status", "error"))
            assert all(w.proc.poll() is None for w in workers)
            time.sleep(0.3)
        # A document is ready just before its task returns: let each worker log its last build.
        while sum(_built(w) for w in workers) < FILES and time.monotonic() < deadline:
            time.sleep(0.3)
    finally:
        for worker in workers:
            stop_worker(worker)
    for document in Document.objects.filter(collection=collection):
        indexes = list(Chunk.objects.filter(document=document).order_by("chunk_index")
                       .values_list("chunk_index", flat=True))
        assert indexes == list(range(document.progress_total)) and len(indexes) > 1, document.source
        assert Chunk.objects.filter(document=document, embedding__isnull=True).count() == 0
    built = [_built(w) for w in workers]
    assert sum(built) == FILES and min(built) >= 1, built
