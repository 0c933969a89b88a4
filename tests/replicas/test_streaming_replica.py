"""Searches on a real streaming replica of the embedded Postgres, started here (pg_basebackup -R,
own port), and what happens when it lags or dies: searches fall back to the primary, never a 500."""

from __future__ import annotations

import contextlib
import copy
import logging
import time
from pathlib import Path

import pytest
from django.core.signals import request_started
from django.db import connections
from django.db.utils import load_backend
from rest_framework.test import APIClient

from accounts.services import token_create
from chat.retrieval.search import search
from corpus.ingest.embed import embed_texts
from corpus.models import Collection, Document
from replicas import health
from tests.chat.factories import make_collection, make_document
from tests.replicas.standby import Standby

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
ALIAS = "replica0"
BREAD = ["Knead the dough for ten minutes. ", "Bake the loaf for thirty minutes. "]
SOUP = ["Simmer the lentil soup for forty minutes. "]



@pytest.fixture(scope="module")
def standby(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        node = Standby(connections["default"].settings_dict)
    try:
        node.create()
        yield node
    finally:
        node.remove()


@pytest.fixture
def replica(transactional_db, standby, settings, monkeypatch):
    """DATABASE_REPLICA_URLS pointing at the standby, as settings.py would configure it: the alias in
    REPLICA_DATABASES, its connection made here (a connection Django's test case allows: an alias
    missing from DATABASES, since the standby's port is known only now)."""
    config = copy.deepcopy(connections["default"].settings_dict)
    config.update(PORT=str(standby.port), OPTIONS={"connect_timeout": 2, "application_name": "ragweb-replica-read"})
    connections[ALIAS] = load_backend(config["ENGINE"]).DatabaseWrapper(config, ALIAS)
    settings.REPLICA_DATABASES = [ALIAS]
    monkeypatch.setattr(health, "MAX_LAG_SECONDS", 60)
    monkeypatch.setattr(health, "CHECK_SECONDS", 60)
    health.forget()
    yield standby
    connections[ALIAS].close()
    del connections[ALIAS]
    health.forget()


@pytest.fixture
def client(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
    return client


def _on_replica(sql: str, *params):
    with connections[ALIAS].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone() if cursor.description else None


def _wait_for(condition, failure: str) -> None:
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, failure
        time.sleep(0.1)


def _wait_replayed(document: Document) -> None:
    _wait_for(lambda: _on_replica("SELECT count(*) FROM corpus_document WHERE id = %s", document.pk)[0],
              "the standby did not replay the primary's rows")


@contextlib.contextmanager
def _statements():
    """The SQL sent to the primary and to the replica inside the block (sent, even if it failed; unlike
    CaptureQueriesContext this does not connect first, so it works with the replica down)."""
    sent = {"default": [], ALIAS: []}

    def recorder(alias):
        def record(execute, sql, params, many, context):
            sent[alias].append(sql)
            return execute(sql, params, many, context)
        return record

    with connections["default"].execute_wrapper(recorder("default")), \
            connections[ALIAS].execute_wrapper(recorder(ALIAS)):
        yield sent


def _searches(sql: list[str]) -> int:
    """The candidate statements among `sql` (their CTE reads the query's vector)."""
    return sum("query_vector AS" in q for q in sql)


def _search(client, query: str) -> tuple[int, set[str], int, int]:
    """POST /api/search/: status, the sources found, candidate statements on the primary and on the replica."""
    with _statements() as sent:
        response = client.post("/api/search/", {"query": query, "k": 5}, format="json")
    sources = {c["document"]["source"] for c in response.json()["chunks"]} if response.status_code == 200 else set()
    return response.status_code, sources, _searches(sent["default"]), _searches(sent[ALIAS])


def test_searches_read_from_the_replica_and_fall_back_when_it_lags(replica, client, user, settings, caplog,
                                                                   monkeypatch):
    kitchen = make_collection("kitchen", owner=user)
    _wait_replayed(make_document(kitchen, "bread.txt", BREAD, embeddings=embed_texts(BREAD)))

    assert _search(client, "how long to knead the dough") == (200, {"bread.txt"}, 0, 1)
    # The replica really is a separate server: while its replay is paused it does not see a new document.
    _on_replica("SELECT pg_wal_replay_pause()")
    try:
        make_document(kitchen, "soup.txt", SOUP, embeddings=embed_texts(SOUP))
        assert _search(client, "lentil soup simmer")[1:] == ({"bread.txt"}, 0, 1)

        # Lagging more than REPLICA_MAX_LAG_SECONDS: searches go to the primary, which has the soup.
        monkeypatch.setattr(health, "MAX_LAG_SECONDS", 0.5)
        monkeypatch.setattr(health, "CHECK_SECONDS", 0)
        _wait_for(lambda: _on_replica("SELECT pg_last_wal_receive_lsn() > pg_last_wal_replay_lsn()")[0],
                  "the standby did not receive the WAL it does not replay")
        time.sleep(1.0)  # older than the limit: the last transaction replayed is the bread's
        with caplog.at_level(logging.WARNING, logger="replicas.health"):
            assert _search(client, "lentil soup simmer") == (200, {"soup.txt", "bread.txt"}, 1, 0)
            assert _search(client, "lentil soup simmer")[2:] == (1, 0)
        said = [r.getMessage() for r in caplog.records if r.name == "replicas.health"]
        assert len(said) == 1 and said[0].startswith(f"replica {ALIAS} is not used") and "lagging" in said[0]
    finally:
        _on_replica("SELECT pg_wal_replay_resume()")
    _wait_for(lambda: health.state(ALIAS, fresh=True).usable, "the standby did not catch up")
    assert _search(client, "lentil soup simmer")[2:] == (0, 1)


def test_a_replica_cut_off_from_the_primary_is_not_used(replica, client, user, settings, monkeypatch):
    """Replay is not behind (nothing arrives), yet the replica no longer follows the primary: not used."""
    kitchen = make_collection("kitchen", owner=user)
    _wait_replayed(make_document(kitchen, "bread.txt", BREAD, embeddings=embed_texts(BREAD)))
    monkeypatch.setattr(health, "CHECK_SECONDS", 0)
    assert _search(client, "knead the dough")[2:] == (0, 1)
    conninfo = _on_replica("SHOW primary_conninfo")[0]
    _on_replica("ALTER SYSTEM SET primary_conninfo = ''")  # its WAL receiver stops, as if the primary were gone
    _on_replica("SELECT pg_reload_conf()")
    try:
        _wait_for(lambda: not _on_replica("SELECT count(*) FROM pg_stat_wal_receiver")[0], "the receiver kept running")
        assert _search(client, "knead the dough") == (200, {"bread.txt"}, 1, 0)
        assert health.state(ALIAS).error == "not streaming from the primary"
    finally:
        _on_replica("ALTER SYSTEM SET primary_conninfo = %s", conninfo)
        _on_replica("SELECT pg_reload_conf()")
    _wait_for(lambda: health.state(ALIAS, fresh=True).usable, "the standby did not stream again")


def test_a_request_that_wrote_the_corpus_searches_the_primary(replica, user):
    kitchen = make_collection("kitchen", owner=user)
    _wait_replayed(make_document(kitchen, "bread.txt", BREAD, embeddings=embed_texts(BREAD)))
    collections = Collection.objects.filter(pk=kitchen.pk)

    request_started.send(sender=None)  # a new request: nothing written yet
    with _statements() as sent:
        search(query="knead the dough", collections=collections)
    assert (_searches(sent["default"]), _searches(sent[ALIAS])) == (0, 1)

    request_started.send(sender=None)
    make_document(kitchen, "soup.txt", SOUP, embeddings=embed_texts(SOUP))  # the write, then the read
    with _statements() as sent:
        result = search(query="lentil soup simmer", collections=collections)
    assert (_searches(sent["default"]), _searches(sent[ALIAS])) == (1, 0)
    assert result.chunks[0].document.source == "soup.txt"


def test_an_answer_reads_its_sources_from_the_replica(replica, client, user):
    """Asking writes the conversation (chat), yet the corpus it reads is unchanged: the replica serves it."""
    kitchen = make_collection("kitchen", owner=user)
    _wait_replayed(make_document(kitchen, "bread.txt", BREAD, embeddings=embed_texts(BREAD)))
    with _statements() as sent:
        response = client.post("/api/ask/", {"question": "How long do I knead the dough?"}, format="json")
    assert response.status_code == 200, response.content
    assert "ten minutes" in response.json()["answer"]
    assert _searches(sent["default"]) == 0 and _searches(sent[ALIAS]) >= 1


def test_a_dead_replica_sends_searches_to_the_primary_without_errors(replica, client, user, admin_client, caplog):
    kitchen = make_collection("kitchen", owner=user)
    _wait_replayed(make_document(kitchen, "bread.txt", BREAD, embeddings=embed_texts(BREAD)))
    assert _search(client, "knead the dough")[2:] == (0, 1)
    assert admin_client.get("/healthz").json()["replicas"][0]["usable"] is True

    replica.stop()
    try:
        # Still believed usable (checked a moment ago): the read fails there and runs again on the primary.
        with caplog.at_level(logging.WARNING, logger="replicas"):
            assert _search(client, "knead the dough") == (200, {"bread.txt"}, 1, 0)
        said = [r.getMessage() for r in caplog.records if r.name == "replicas.routing"]
        assert len(said) == 1 and "run again on the primary" in said[0]
        # Now known down: straight to the primary.
        assert _search(client, "knead the dough") == (200, {"bread.txt"}, 1, 0)
        state = admin_client.get("/healthz").json()["replicas"][0]
        assert state["usable"] is False and state["error"].startswith("unreachable")
    finally:
        replica.start()
