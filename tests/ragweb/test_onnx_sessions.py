"""ragweb.onnx_sessions: a session loaded before a fork starts no threads and runs in the child."""

from __future__ import annotations

import os

import numpy as np

from corpus.ingest.embed import PACKAGED_INT8_GRAPH
from ragweb.onnx_sessions import load_session, run_parallel


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def test_a_loaded_session_starts_no_threads_and_runs_in_a_forked_child():
    before = _threads()
    session = load_session(PACKAGED_INT8_GRAPH)
    ids = np.array([[101, 7592, 2088, 102]], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    expected = session.run(None, feeds)[0]
    assert _threads() == before  # nothing a forked child would lack

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's session, run again, gives the same vectors
        try:
            os.write(write, b"1" if np.array_equal(session.run(None, feeds)[0], expected) else b"0")
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1" and os.waitstatus_to_exitcode(status) == 0


def test_run_parallel_keeps_the_order_and_leaves_no_thread_behind():
    before = _threads()
    assert run_parallel(lambda x: x * x, list(range(10)), threads=3) == [x * x for x in range(10)]
    assert run_parallel(lambda x: -x, [4], threads=3) == [-4]
    assert _threads() == before
