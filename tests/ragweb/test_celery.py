"""A task goes through the real Redis broker to a real worker process and back."""

import pytest

from ragweb.celery import app, ping


@pytest.mark.slow
def test_task_round_trip_through_real_broker(celery_worker_process):
    result = ping.delay()
    assert result.get(timeout=60) == "pong"
    assert result.successful()
    replies = app.control.ping(destination=[celery_worker_process.hostname], timeout=2)
    assert replies and celery_worker_process.hostname in replies[0]


class _Worker:
    """The attributes Celery's WorkController has when worker_init is sent."""

    def __init__(self, pool_cls, concurrency):
        self.pool_cls, self.concurrency = pool_cls, concurrency


def test_a_prefork_pool_shares_the_cpus_among_its_processes_as_torch_threads(settings, monkeypatch):
    import os

    from celery.concurrency.prefork import TaskPool as Prefork
    from celery.concurrency.thread import TaskPool as Threads

    from ragweb.celery import _share_the_cpus_among_pool_processes

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    settings.EMBEDDING_THREADS = 0
    _share_the_cpus_among_pool_processes(sender=_Worker(Threads, 2))
    assert settings.EMBEDDING_THREADS == 0  # not forked processes: every CPU
    _share_the_cpus_among_pool_processes(sender=_Worker(Prefork, 1))
    assert settings.EMBEDDING_THREADS == 0
    _share_the_cpus_among_pool_processes(sender=_Worker(Prefork, 2))
    assert settings.EMBEDDING_THREADS == 2
    settings.EMBEDDING_THREADS = 0
    _share_the_cpus_among_pool_processes(sender=_Worker("prefork", 8))
    assert settings.EMBEDDING_THREADS == 1  # never none
    settings.EMBEDDING_THREADS = 3  # set by the operator: kept
    _share_the_cpus_among_pool_processes(sender=_Worker(Prefork, 2))
    assert settings.EMBEDDING_THREADS == 3
