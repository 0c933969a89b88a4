import os
import threading

import pytest

from chat.retrieval import side_connection


@pytest.fixture
def one_worker(settings, monkeypatch):
    settings.SEARCH_SIDE_CONNECTIONS = 1
    monkeypatch.setattr(side_connection, "_executor", None)
    monkeypatch.setattr(side_connection, "_idle", None)
    monkeypatch.setattr(side_connection, "_wrappers", [])  # the other tests' connections stay tracked
    yield
    if side_connection._executor is not None:
        side_connection._executor.shutdown(wait=True)
    side_connection.close_all()


def test_work_runs_on_another_thread(one_worker):
    future = side_connection.try_submit(threading.current_thread)
    assert future is not None
    worker = future.result(timeout=10)
    assert worker is not threading.current_thread() and worker.name.startswith("ragweb-side-db")


def test_busy_workers_turn_work_away_instead_of_queueing_it(one_worker):
    release = threading.Event()
    busy = side_connection.try_submit(lambda: release.wait(10))
    assert busy is not None
    assert side_connection.try_submit(lambda: "queued") is None
    release.set()
    assert busy.result(timeout=10) is True
    # The permit comes back when the work is done (the done-callback may run just after result()).
    for _ in range(100):
        future = side_connection.try_submit(lambda: "ran")
        if future is not None:
            break
        threading.Event().wait(0.01)
    assert future is not None and future.result(timeout=10) == "ran"


@pytest.mark.django_db
def test_not_available_inside_a_transaction_or_when_disabled(settings):
    settings.SEARCH_SIDE_CONNECTIONS = 4
    assert not side_connection.available()  # pytest-django's test transaction
    settings.SEARCH_SIDE_CONNECTIONS = 0
    assert not side_connection.available()


def test_available_in_autocommit(settings, django_db_blocker):
    settings.SEARCH_SIDE_CONNECTIONS = 4
    with django_db_blocker.unblock():
        assert side_connection.available()


def test_a_forked_process_gets_a_pool_of_its_own(one_worker, monkeypatch):
    assert side_connection.try_submit(lambda: 1).result(timeout=10) == 1
    inherited = side_connection._executor
    monkeypatch.setattr(side_connection, "_owner_pid", -1)  # as if this process were a fork's child
    assert side_connection.try_submit(lambda: 2).result(timeout=10) == 2
    assert side_connection._executor is not inherited
    assert side_connection._owner_pid == os.getpid()
    inherited.shutdown(wait=True)
