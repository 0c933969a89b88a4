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
