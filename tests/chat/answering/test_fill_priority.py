"""The sentence-vector fill queued when a document is published waits behind ingestion work in the
real Redis broker: its message lands in the lowest priority step, which a worker takes last."""

from __future__ import annotations

import json

import pytest
import redis

from chat.receivers import FILL_PRIORITY, fill_published
from corpus.tasks import process_document_task


def _task_names(broker: redis.Redis, key: bytes) -> list[str]:
    return [json.loads(raw)["headers"]["task"] for raw in broker.lrange(key, 0, -1)]


@pytest.mark.django_db
def test_a_fill_is_queued_behind_the_documents_waiting_to_be_built(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.ANSWER_VECTORS_AT_INGESTION = True
    from ragweb.celery import app

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    queue = app.conf.task_default_queue
    low = f"{queue}\x06\x16{FILL_PRIORITY}".encode()
    before_low, before_plain = broker.llen(low), broker.llen(queue)
    try:
        fill_published(document_id=987654321)
        process_document_task.delay(987654322)
        assert broker.llen(low) == before_low + 1
        assert broker.llen(queue) == before_plain + 1
        assert _task_names(broker, low)[0] == "chat.fill_sentence_vectors"
        assert _task_names(broker, queue.encode())[0] == process_document_task.name
        # What a worker asks Redis for, in order: the plain (priority 0) list before the fill's.
        with app.connection_for_read() as connection:
            channel = connection.default_channel
            keys = [channel._q_for_pri(queue, step) for step in channel.priority_steps]
        assert keys.index(queue) < keys.index(low.decode())
    finally:
        for key in (low, queue.encode()):
            for raw in broker.lrange(key, 0, -1):
                body = json.loads(raw)
                if body["headers"]["task"] in {"chat.fill_sentence_vectors", process_document_task.name} and \
                        body["headers"]["argsrepr"] in {"(987654321,)", "(987654322,)"}:
                    broker.lrem(key, 1, raw)
        app.conf.task_always_eager = eager
