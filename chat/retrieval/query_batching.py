"""The queries of concurrent searches embedded together.

Embedding one short query costs about as much CPU as the rest of a search; a forward pass over 8
queries costs about 2.5x one (measured in docs/scaling.md, "Searches per second"), so under load a
web process that embeds the queries waiting at the same moment in one pass serves several times more.

No timer and no extra thread: the first search to arrive embeds at once (an idle server adds no
latency); searches arriving while a pass runs wait, and when it ends the first of them embeds all
that are waiting (up to QUERY_EMBEDDING_BATCH queries) in the next pass, for itself and the others.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

# queries -> (len(queries), dims) vectors
Embed = Callable[[list[str]], np.ndarray]


@dataclass(eq=False)
class _Waiting:
    queries: list[str]
    woken: threading.Event = field(default_factory=threading.Event)
    leads: bool = False  # woken to embed the next pass itself
    vectors: np.ndarray | None = None
    error: BaseException | None = None

    def result(self) -> np.ndarray:
        if self.error is not None:
            raise self.error
        return self.vectors


class QueryBatcher:
    """Embeds the queries given by concurrent callers of embed() in shared passes of at most
    `max_queries` queries (a caller's own list is never split); each caller gets its own rows, or
    the exception its pass raised."""

    def __init__(self, embed: Embed, *, max_queries: int) -> None:
        self._embed = embed
        self.max_queries = max(1, max_queries)
        self._lock = threading.Lock()
        self._waiting: list[_Waiting] = []
        self._busy = False
        self.passes = 0  # forward passes run (for the tests and measurements)

    def embed(self, queries: list[str]) -> np.ndarray:
        me = _Waiting(list(queries))
        with self._lock:
            self._waiting.append(me)
            leads = not self._busy
            self._busy = True
        if not leads:
            me.woken.wait()
            if not me.leads:
                return me.result()
        self._run_pass()
        return me.result()

    def _run_pass(self) -> None:
        with self._lock:
            batch, size = [], 0
            for waiting in self._waiting:
                if batch and size + len(waiting.queries) > self.max_queries:
                    break
                batch.append(waiting)
                size += len(waiting.queries)
            del self._waiting[:len(batch)]
        try:
            vectors = self._embed([q for w in batch for q in w.queries])
            start = 0
            for waiting in batch:
                waiting.vectors = vectors[start:start + len(waiting.queries)]
                start += len(waiting.queries)
        except BaseException as exc:  # noqa: BLE001 - each caller raises it in its own thread
            for waiting in batch:
                waiting.error = exc
        self.passes += 1
        with self._lock:
            if self._waiting:
                following = self._waiting[0]
                following.leads = True  # the first of those waiting runs the next pass
                following.woken.set()
            else:
                self._busy = False
        for waiting in batch:
            waiting.woken.set()


_batchers: dict[str | None, QueryBatcher] = {}
_batchers_lock = threading.Lock()

# Concurrent searches in one process embed their queries together, at most this many a pass (1: each alone):
# 50 clients on 2 processes x 16 threads reached 133-137 searches/s with it (docs/scaling.md, "Searches per
# second"); a pass of 16 short queries costs little more than one.
QUERY_EMBEDDING_BATCH = 16
# Torch threads for a pass (0: one per CPU); see _embed_now.
QUERY_EMBEDDING_THREADS = 1


def embed_queries(queries: list[str], *, model: str | None = None) -> np.ndarray:
    """The one way to embed questions and search queries: (len(queries), dims) L2-normalised
    float32 vectors with `model` (None: EMBEDDING_MODEL), in one pass with the queries of the other
    searches waiting at the same moment in this process for the same model
    (QUERY_EMBEDDING_BATCH queries a pass at most; 1 embeds each search alone)."""
    if QUERY_EMBEDDING_BATCH <= 1:
        return _embed_now(queries, model)
    batcher = _batchers.get(model)
    if batcher is None:
        with _batchers_lock:
            batcher = _batchers.get(model)
            if batcher is None:
                batcher = _batchers[model] = QueryBatcher(
                    lambda texts: _embed_now(texts, model), max_queries=QUERY_EMBEDDING_BATCH)
    return batcher.embed(queries)


def _embed_now(queries: list[str], model: str | None) -> np.ndarray:
    """On QUERY_EMBEDDING_THREADS torch threads (default one). A query is a few dozen tokens: a
    second thread saves little of its embedding (~1.5 ms here), while the web process serves other
    requests and Postgres runs their statements on the same cores; under concurrent searches each
    embedding on one thread leaves the others a core."""
    from corpus.ingest.embed import embed_texts

    return embed_texts(queries, threads=QUERY_EMBEDDING_THREADS, model=model)
