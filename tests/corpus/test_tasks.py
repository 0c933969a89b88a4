"""corpus.tasks: idempotent runs, retries of transient errors, and a worker killed with kill -9."""

from __future__ import annotations

import re
import time

import pytest
import redis
from django.db import OperationalError

from corpus import services
from corpus.ingest import pipeline
from corpus.models import Chunk, Collection, Document
from corpus.tasks import MAX_RETRIES, process_document_task
from tests.corpus.ingest_helpers import GUIDE_V1, assert_chunks_tile, eager_media, long_markdown  # noqa: F401
from tests.workers import kill_worker, start_worker, stop_worker

Status = Document.Status


def make_collection(**fields) -> Collection:
    return Collection.objects.create(slug="notes", name="Notes", chunk_size=fields.pop("chunk_size", 32),
                                     chunk_overlap=0, **fields)


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_media")
def test_the_task_run_twice_does_not_duplicate_chunks(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        document = services.document_ingest(collection=make_collection(), source="guide.md", data=GUIDE_V1,
                                            filename="guide.md")
    document.refresh_from_db()
    chunk_ids = sorted(Chunk.objects.filter(document=document).values_list("pk", flat=True))

    assert process_document_task.apply(args=[document.pk]).get() == "unchanged"
    assert process_document_task.apply(args=[document.pk]).get() == "unchanged"
    assert sorted(Chunk.objects.filter(document=document).values_list("pk", flat=True)) == chunk_ids


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_media")
def test_a_transient_error_is_retried(monkeypatch, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):  # not run yet
        document = services.document_ingest(collection=make_collection(), source="guide.md", data=GUIDE_V1,
                                            filename="guide.md")
    real = pipeline.process_document
    calls = []

    def flaky(document_id):
        calls.append(document_id)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(document_id)

    monkeypatch.setattr(pipeline, "process_document", flaky)
    process_document_task.apply(args=[document.pk])
    document.refresh_from_db()

    assert calls == [document.pk, document.pk]
    assert document.status == Status.READY
    assert_chunks_tile(document)


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_media")
def test_a_document_is_failed_when_retries_run_out(monkeypatch, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        document = services.document_ingest(collection=make_collection(), source="guide.md", data=GUIDE_V1,
                                            filename="guide.md")
    calls = []

    def down(document_id):
        calls.append(document_id)
        raise OperationalError("could not connect to server")

    monkeypatch.setattr(pipeline, "process_document", down)
    process_document_task.apply(args=[document.pk])
    document.refresh_from_db()

    assert len(calls) == MAX_RETRIES + 1
    assert document.status == Status.FAILED
    assert document.error.startswith("Processing kept failing on a temporary error")


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_document_leaves_it_to_the_next_worker(settings, tmp_path, monkeypatch):
    # A short visibility timeout so the broker hands the unacked task out again within the test.
    settings.CELERY_VISIBILITY_TIMEOUT = 15
    # The stored files go to the default media root (RAGWEB_VAR_DIR's), which the worker shares.
    monkeypatch.setenv("EMBEDDING_BATCH_SIZE", "8")  # progress every 64 chunks: easy to catch mid-way
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.flushdb()

    first = start_worker(settings, name="pipeline-killed")
    try:
        document = services.document_ingest(collection=make_collection(chunk_size=48), source="notes.md",
                                            data=long_markdown(100), filename="notes.md")

        def mid_embedding():
            row = Document.objects.values("status", "progress_done", "progress_total").get(pk=document.pk)
            return (row["status"] == Status.EMBEDDING and 0 < row["progress_done"] < row["progress_total"]) and row

        seen = _wait_for(mid_embedding, 240, "the first worker to be embedding")
    finally:
        kill_worker(first)
    assert seen["progress_total"] > 128
    assert Document.objects.get(pk=document.pk).status == Status.EMBEDDING
    assert not Chunk.objects.filter(document=document).exists()  # nothing half-published
    # The task is still the dead worker's (unacked), or the broker already put it back in the queue:
    # the document took longer than the visibility timeout, so it was restored while still running.
    assert broker.hlen("unacked") + broker.llen("celery") == 1

    second = start_worker(settings, name="pipeline-next")
    try:
        _wait_for(lambda: Document.objects.get(pk=document.pk).status in (Status.READY, Status.FAILED), 240,
                  "the next worker to finish the document")
        document.refresh_from_db()
        assert document.status == Status.READY, document.error
        chunks = assert_chunks_tile(document)
        chunk_ids = sorted(c.pk for c in chunks)
        # Exactly once: the task was acked, nothing is queued or pending, and nothing rebuilds it again.
        # Publishing queued follow-ups at lower priorities (the graph merge, the sentence fill): the
        # worker runs them after the build, so wait until they are done too.
        follow_ups = [f"celery\x06\x16{step}" for step in (3, 6, 9)]
        _wait_for(lambda: broker.hlen("unacked") == 0 and not any(broker.llen(key) for key in follow_ups), 120,
                  "the task and its follow-ups to be acknowledged")
        time.sleep(settings.CELERY_VISIBILITY_TIMEOUT / 3)
        assert broker.llen("celery") == 0 and broker.hlen("unacked") == 0
        assert sorted(Chunk.objects.filter(document=document).values_list("pk", flat=True)) == chunk_ids
        assert Chunk.objects.filter(document=document).count() == document.progress_total == len(chunks)
    finally:
        stop_worker(second)
    # The document's build task only (publishing also queues the chat's sentence-vector fill).
    log = "\n".join(line for line in second.log.read_text().splitlines() if "corpus.process_document[" in line)
    # Built once. Taking longer than the visibility timeout, the task may be handed out again once
    # more; that delivery finds the document up to date and does nothing.
    assert log.count("] succeeded") == log.count("] received") >= 1
    assert log.count(": 'ready'") == 1
    assert log.count(": 'unchanged'") == log.count("] received") - 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_a_starting_worker_requeues_what_a_dead_worker_left_in_progress():
    from corpus.tasks import requeue_stalled_documents

    document = services.document_ingest(collection=make_collection(), source="guide.md", data=GUIDE_V1,
                                        filename="guide.md")
    # As a worker killed mid-embedding leaves it: in progress, no lock held, the old build gone.
    Document.objects.filter(pk=document.pk).update(status=Status.EMBEDDING, built_hash="", progress_done=4,
                                                   progress_total=9)

    requeue_stalled_documents()  # the worker_ready signal's handler (tasks run eagerly here)

    document.refresh_from_db()
    assert document.status == Status.READY
    assert_chunks_tile(document)


def test_transient_errors_are_retried_by_celery_with_backoff():
    assert process_document_task.autoretry_for == pipeline.TRANSIENT_ERRORS
    assert process_document_task.retry_backoff and process_document_task.retry_jitter
    assert process_document_task.max_retries == MAX_RETRIES


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_a_starting_worker_enqueues_queued_documents_whose_message_was_lost(monkeypatch):
    from corpus.tasks import requeue_stalled_documents

    with monkeypatch.context() as patched:
        patched.setattr(process_document_task, "delay", lambda document_id: None)  # the broker loses it
        document = services.document_ingest(collection=make_collection(), source="guide.md", data=GUIDE_V1,
                                            filename="guide.md")
    assert Document.objects.get(pk=document.pk).status == Status.QUEUED

    requeue_stalled_documents()

    document.refresh_from_db()
    assert document.status == Status.READY
    assert_chunks_tile(document)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_pool_process_killed_mid_document_costs_only_its_own_document(settings, tmp_path, monkeypatch):
    """make run's worker builds two documents in two pool processes: kill -9 of one (a crash, the OOM
    killer) leaves the worker and the other document running; the lost task goes back to the queue
    at once (acks_late + reject_on_worker_lost) and a new pool process builds it, exactly once."""
    import psutil

    # The stored files go to the default media root (RAGWEB_VAR_DIR's), which the worker shares.
    monkeypatch.setenv("EMBEDDING_BATCH_SIZE", "8")  # progress every 64 chunks: easy to catch mid-way
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.flushdb()

    worker = start_worker(settings, name="pool-killed", concurrency=2)
    try:
        main = psutil.Process(worker.proc.pid)
        collection = make_collection(chunk_size=48)
        documents = [services.document_ingest(collection=collection, source=f"notes-{n}.md", data=long_markdown(60 + n),
                                              filename=f"notes-{n}.md") for n in range(2)]

        def both_embedding():
            rows = Document.objects.filter(pk__in=[d.pk for d in documents]).values("status", "progress_done")
            return all(r["status"] == Status.EMBEDDING and r["progress_done"] > 0 for r in rows)

        _wait_for(both_embedding, 240, "both pool processes to be embedding")
        pool = main.children()
        assert len(pool) == 2
        pool[0].kill()

        def all_done():
            return not Document.objects.filter(pk__in=[d.pk for d in documents]).exclude(
                status__in=[Status.READY, Status.FAILED]).exists()

        _wait_for(all_done, 300, "both documents to be built")

        def builds_finished():  # a document is ready a moment before its task returns
            return len(re.findall(r"corpus\.process_document\[[^\]]+\] succeeded", worker.log.read_text())) >= 2

        _wait_for(builds_finished, 60, "both build tasks to end")
        assert worker.proc.poll() is None  # the worker itself lived on
        replaced = main.children()
        assert len(replaced) == 2 and pool[0].pid not in {p.pid for p in replaced} and pool[1] in replaced
    finally:
        stop_worker(worker)
    for document in documents:
        document.refresh_from_db()
        assert document.status == Status.READY, document.error
        chunks = assert_chunks_tile(document)
        assert Chunk.objects.filter(document=document).count() == document.progress_total == len(chunks)
    log = worker.log.read_text()
    assert len(re.findall(r"corpus\.process_document\[[^\]]+\] succeeded", log)) == 2  # once each
    assert len(re.findall(r"WorkerLostError\('Worker exited prematurely: signal 9", log)) == 1
