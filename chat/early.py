"""The database work a search starts before its queries are embedded.

Embedding a query keeps the model busy for 20-30 ms on this kind of machine, and part of a search
needs no vector: reading which collections the caller may search, and the keyword half of each
query of a hybrid search (chat.candidates.run_keyword_half). That part runs meanwhile on a side
connection (chat/side_connection.py), on the other core, so after the embedding only the vector
side, fusion and RSE are left. Measured with `manage.py bench_search` (docs/evaluation.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future

from django.db import InterfaceError, OperationalError
from django.db.models import QuerySet

from chat import side_connection
from chat.candidates import CandidateSet, run_keyword_half
from corpus.models import Collection


class EarlyWork:
    """Futures of the work started: the collections' (id, chunker) rows, then each query's keyword half."""

    def __init__(self, n_keyword_halves: int):
        self.collections: Future[list[tuple[int, str]]] = Future()
        self.keyword_halves: list[Future[CandidateSet]] = [Future() for _ in range(n_keyword_halves)]

    def collection_rows(self) -> list[tuple[int, str]] | None:
        """The rows, or None when the side connection failed (the caller reads them itself)."""
        try:
            return self.collections.result()
        except (OperationalError, InterfaceError):
            return None

    def keyword_half(self, i: int) -> Future[CandidateSet] | None:
        return self.keyword_halves[i] if i < len(self.keyword_halves) else None


def start(*, queries: Sequence[str], collections: QuerySet[Collection], hybrid: bool,
          candidates: int) -> EarlyWork | None:
    """Start reading `collections` and, for a hybrid search, each query's keyword half, one after
    the other on a side connection. None when no side connection may be used: inside a
    transaction (it could not see the caller's uncommitted rows), when disabled, or when every side
    connection is busy (under load, queueing for one would be slower than one statement on the
    caller's own connection)."""
    if not side_connection.available():
        return None
    work = EarlyWork(len(queries) if hybrid else 0)
    collections = collections.all()  # a queryset of its own, evaluated on the other thread

    def run() -> None:
        pending = [work.collections, *work.keyword_halves]
        for future in pending:
            future.set_running_or_notify_cancel()
        try:
            rows = list(collections.values_list("id", "chunker"))  # as chat.search reads them
            work.collections.set_result(rows)
            collection_ids = [collection_id for collection_id, _ in rows]
            for query, future in zip(queries, work.keyword_halves, strict=True):
                future.set_result(run_keyword_half(query=query, collection_ids=collection_ids, candidates=candidates)
                                  if collection_ids else CandidateSet([], None))
        except BaseException as exc:
            for future in pending:
                if not future.done():
                    future.set_exception(exc)
            raise  # a database error also closes the side connection (chat/side_connection.py)

    submitted = side_connection.try_submit(run)
    if submitted is None:
        return None
    submitted.add_done_callback(lambda done: _fail_unfinished(work, done))
    return work


def _fail_unfinished(work: EarlyWork, done: Future) -> None:
    """Should the work fail before it started (the side connection could not be set up), its
    futures fail too rather than leave the search waiting."""
    exc = done.exception()
    if exc is not None:
        for future in [work.collections, *work.keyword_halves]:
            if not future.done():
                future.set_exception(exc)
