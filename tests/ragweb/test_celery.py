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



@pytest.mark.slow
def test_the_pool_process_and_its_postgres_backend_run_at_the_background_priority(celery_worker_process):
    import os
    import subprocess
    import time

    from django.db import connection

    from corpus.tasks import graph_merge_task
    from lib.priority import BACKGROUND_NICE

    pool = [int(pid) for pid in subprocess.run(["pgrep", "-P", str(celery_worker_process.proc.pid)],
                                               capture_output=True, text=True).stdout.split()]
    assert pool and all(os.getpriority(os.PRIO_PROCESS, pid) == BACKGROUND_NICE for pid in pool)
    assert os.getpriority(os.PRIO_PROCESS, celery_worker_process.proc.pid) != BACKGROUND_NICE  # its main process

    # The merge task waits on a table lock held here, so its backend can be looked at while it serves the task.
    holder = connection.get_new_connection(connection.get_connection_params())
    try:
        with holder.cursor() as cursor:
            cursor.execute("BEGIN; LOCK TABLE corpus_chunk IN ACCESS EXCLUSIVE MODE")
        result = graph_merge_task.delay()
        waiting = []
        deadline = time.monotonic() + 60
        while not waiting and time.monotonic() < deadline:
            time.sleep(0.2)
            with connection.cursor() as cursor:
                cursor.execute("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = "
                               "current_database()")
                waiting = [pid for (pid,) in cursor.fetchall()]
        assert [os.getpriority(os.PRIO_PROCESS, pid) for pid in waiting] == [BACKGROUND_NICE]
        assert os.getpriority(os.PRIO_PROCESS, holder.info.backend_pid) != BACKGROUND_NICE  # ours untouched
    finally:
        holder.rollback()
        holder.close()
    assert result.get(timeout=60) == 0
