"""corpus.graph: published chunks start outside the HNSW graph; the merge moves them in, in small
batches, one merger at a time, giving them their BM25 postings (corpus 0017) without touching the statistics."""

import pytest
from django.conf import settings
from django.db import connection, connections

from corpus.graph import merge, receivers
from corpus.graph.merge import MERGE_PRIORITY
from corpus.models import Chunk
from corpus.signals import document_published
from tests.chat.factories import make_collection, make_document, random_unit_vectors


def _bm25_rows() -> tuple[set, set]:
    """The postings and statistics rows with their xmin: a row deleted and inserted again gets a new one."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT chunk_id, lexeme, tf, xmin::text FROM bm25_posting")
        postings = set(cursor.fetchall())
        cursor.execute("SELECT collection_id, chunk_count, total_length, xmin::text FROM bm25_collection_stats "
                       "UNION ALL SELECT collection_id, df, 0, xmin::text FROM bm25_term_stats")
        stats = set(cursor.fetchall())
    return postings, stats


@pytest.mark.django_db
def test_published_chunks_start_outside_the_graph_and_the_merge_moves_them_in_batches():
    col = make_collection("graph")
    make_document(col, "a.txt", [f"alpha {i} " for i in range(7)], embeddings=random_unit_vectors(7))
    assert merge.graph_tail_size() == 7
    assert merge.graph_merge_batch(batch=5) == 5
    assert merge.graph_tail_size() == 2
    run = merge.graph_merge(batch=5)
    assert (run.merged, run.left, run.locked_out) == (2, 0, False)
    assert set(Chunk.objects.values_list("in_graph", flat=True)) == {True}
    assert merge.graph_merge().merged == 0


@pytest.mark.django_db
def test_the_merge_gives_the_chunks_their_postings_and_leaves_the_statistics_untouched():
    col = make_collection("graph")
    make_document(col, "a.txt", ["compost heap turned ", "bread dough kneaded ", "tomatoes ripen "],
                  embeddings=random_unit_vectors(3))
    postings, stats = _bm25_rows()
    assert not postings and stats  # published: counted in the statistics, postings only once merged
    assert merge.graph_merge().merged == 3
    merged_postings, merged_stats = _bm25_rows()
    assert merged_stats == stats
    assert {(lexeme, tf) for _, lexeme, tf, _ in merged_postings} == {
        ("compost", 1), ("heap", 1), ("turn", 1), ("bread", 1), ("dough", 1), ("knead", 1), ("tomato", 1),
        ("ripen", 1)}
    # The update triggers still do their work when the text changes.
    chunk = Chunk.objects.get(document__collection=col, chunk_index=2)
    Chunk.objects.filter(pk=chunk.pk).update(text="cucumbers ripen ")
    with connection.cursor() as cursor:
        cursor.execute("SELECT lexeme FROM bm25_posting WHERE chunk_id = %s ORDER BY lexeme", [chunk.pk])
        assert [r[0] for r in cursor.fetchall()] == ["cucumb", "ripen"]


@pytest.mark.django_db(transaction=True)
def test_a_second_merger_does_nothing_while_one_runs():
    col = make_collection("graph")
    make_document(col, "a.txt", ["one ", "two "], embeddings=random_unit_vectors(2))
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [merge._LOCK_KEY])
        run = merge.graph_merge()
        assert (run.merged, run.left, run.locked_out) == (0, 2, True)
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [merge._LOCK_KEY])
    finally:
        other.close()
    assert merge.graph_merge().merged == 2


def test_publishing_queues_a_low_priority_merge(monkeypatch):
    from corpus import tasks

    queued = []
    monkeypatch.setattr(tasks.graph_merge_task, "apply_async", lambda *a, **kw: queued.append(kw))
    assert any(key[0] == "corpus_graph_merge" for key, *_ in document_published.receivers)
    receivers.merge_published(document_id=1)
    assert len(queued) == 1 and "priority" not in queued[0]  # the task's own priority applies
    assert tasks.graph_merge_task._get_exec_options()["priority"] == MERGE_PRIORITY
    # ... and beat sweeps what a crashed worker left, at that priority too (one definition).
    sweep = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "corpus.graph_merge"]
    assert sweep and sweep[0]["schedule"] <= 60 and "priority" not in sweep[0].get("options", {})


@pytest.mark.django_db
def test_the_task_queues_the_rest_again_when_it_stops_on_time(monkeypatch):
    from corpus import tasks

    col = make_collection("graph")
    make_document(col, "a.txt", [f"w{i} " for i in range(6)], embeddings=random_unit_vectors(6))
    queued = []
    monkeypatch.setattr(tasks.graph_merge_task, "apply_async", lambda *a, **kw: queued.append(kw))
    monkeypatch.setattr(tasks, "graph_merge", lambda: merge.graph_merge(seconds=0.0, batch=4))
    assert tasks.graph_merge_task() == 4  # one batch started is finished
    assert len(queued) == 1
    queued.clear()
    monkeypatch.setattr(tasks, "graph_merge", lambda: merge.graph_merge(batch=4))
    assert tasks.graph_merge_task() == 2
    assert queued == []


@pytest.mark.django_db
def test_the_merge_waits_in_the_real_broker_behind_builds_and_before_sentence_fills(settings):
    import json

    import redis
    from celery.beat import ScheduleEntry, Scheduler

    from chat.receivers import FILL_PRIORITY
    from ragweb.celery import app

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    queue = app.conf.task_default_queue
    key = f"{queue}\x06\x16{MERGE_PRIORITY}"
    def ids() -> set[str]:
        return {json.loads(raw)["headers"]["id"] for raw in broker.lrange(key, 0, -1)}

    before = ids()
    try:
        receivers.merge_published(document_id=1)
        # Celery beat's sweep (settings.CELERY_BEAT_SCHEDULE, no priority of its own) lands there too.
        scheduler = Scheduler(app=app, lazy=True)
        scheduler.apply_async(ScheduleEntry(app=app, **settings.CELERY_BEAT_SCHEDULE["graph-merge"]), advance=False)
        new = [json.loads(raw)["headers"] for raw in broker.lrange(key, 0, -1)
               if json.loads(raw)["headers"]["id"] not in before]
        # (another process publishing into the same broker may add its own)
        assert len(new) >= 2 and {headers["task"] for headers in new} == {"corpus.graph_merge"}
        assert any(headers.get("celery_beat_task") for headers in new)
        with app.connection_for_read() as connection:
            channel = connection.default_channel
            keys = [channel._q_for_pri(queue, step) for step in channel.priority_steps]
        assert keys.index(queue) < keys.index(key) < keys.index(f"{queue}\x06\x16{FILL_PRIORITY}")
    finally:
        for raw in broker.lrange(key, 0, -1):
            if json.loads(raw)["headers"]["id"] not in before:
                broker.lrem(key, 1, raw)
        app.conf.task_always_eager = eager
