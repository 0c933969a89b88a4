"""ONNX Runtime sessions loaded once in a forking parent and shared by its children.

make run's parent (scripts/run.py), gunicorn's master with --preload and Celery's prefork parent
load the models before they fork, so that the children share the weights' memory. A session is
safe to share that way only if it owns no threads: a forked child gets only the forking thread,
and a session whose intra-op pool was started in the parent would wait on threads the child does
not have. So every session here runs each call on the calling thread alone (one intra-op thread,
sequential execution: ONNX Runtime then starts no pool at all; checked on this machine, the thread
count of the process stays the same), and parallel work runs several calls at once from
short-lived Python threads (run_parallel): InferenceSession.run is thread-safe and releases the GIL.
For a model as small as MiniLM, whole batches side by side also keep the cores busier than one
batch split op by op (docs/scaling.md, "Embedding runtime").

Every ONNX model the app loads before the fork loads through load_session: the embedding model
(corpus.ingest.onnx_encoder) and the reader (reader.runtime). On a small machine one thread a call
is also what serving wants: the web runs many requests at once, and intra-op threads would only
contend with them and with Postgres.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def load_session(path: str | Path):
    """An onnxruntime.InferenceSession of the model file at `path` on the CPU that starts no threads
    of its own (see the module docstring), with every graph optimisation on."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def run_parallel(function: Callable[[T], R], items: Sequence[T], *, threads: int) -> list[R]:
    """[function(item) for item in items], on up to `threads` threads at once, in order. One item
    or one thread runs on the calling thread; otherwise the threads are started for this call and
    joined before it returns, so none is left running when the process forks."""
    if threads <= 1 or len(items) <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(threads, len(items)), thread_name_prefix="onnx") as pool:
        return list(pool.map(function, items))
