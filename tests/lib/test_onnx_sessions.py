"""lib.onnx_sessions: a session loaded before a fork starts no threads and runs in the child."""

from __future__ import annotations

import os
import threading
import time

import numpy as np

from corpus.ingest.embed import PACKAGED_INT8_GRAPH
from lib.onnx_sessions import load_session, run_parallel


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _threads_settle_at(expected: int) -> int:
    """The process's thread count once the threads just joined are gone: join() returns when a
    thread has finished its Python work, a moment before the kernel removes it."""
    deadline = time.monotonic() + 2.0
    while _threads() != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return _threads()


def test_a_loaded_session_starts_no_threads_and_runs_in_a_forked_child():
    import onnxruntime  # noqa: F401 - its import starts one idle thread of its own; measured after it

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
    before, python_threads = _threads(), threading.active_count()
    assert run_parallel(lambda x: x * x, list(range(10)), threads=3) == [x * x for x in range(10)]
    assert run_parallel(lambda x: -x, [4], threads=3) == [-4]
    assert threading.active_count() == python_threads  # joined before run_parallel returned
    assert _threads_settle_at(before) == before
