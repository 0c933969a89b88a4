"""The keyword halves of a hybrid search, started before its queries are embedded.

Embedding a query keeps the model busy for 20-30 ms on this kind of machine, and the keyword half
of a hybrid search needs the query's words, not its vector (chat.candidates.run_keyword_half). It
runs meanwhile on a side connection (chat/side_connection.py), on the other core, so after the
embedding only the vector half, fusion and RSE are left: 0.86-0.92x the total time of the same
search on one connection (`manage.py bench_search`, docs/evaluation.md). This pays only with the
query embedded on one torch thread (corpus.embedding.embed_queries): with two threads on two cores,
the embedding beside the keyword half nearly doubled.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future

from chat import side_connection
from chat.candidates import CandidateSet, run_keyword_half


def start_keyword_halves(*, queries: Sequence[str], collection_ids: list[int],
                         candidates: int) -> list[Future[CandidateSet]] | None:
    """Start each query's keyword half, one after the other on a side connection; a future per
    query, for chat.candidates.fetch_candidates' `keyword_half`. None when no side connection may
    be used: inside a transaction (it could not see the caller's uncommitted rows), when disabled,
    or when every side connection is busy (under load, queueing for one would be slower than one
    statement on the caller's own connection)."""
    if not side_connection.available():
        return None
    halves: list[Future[CandidateSet]] = [Future() for _ in queries]

    def run() -> None:
        for query, half in zip(queries, halves, strict=True):
            half.set_running_or_notify_cancel()
            half.set_result(run_keyword_half(query=query, collection_ids=collection_ids, candidates=candidates))

    submitted = side_connection.try_submit(run)
    if submitted is None:
        return None
    submitted.add_done_callback(lambda done: _fail_unfinished(halves, done))
    return halves


def _fail_unfinished(halves: list[Future[CandidateSet]], done: Future) -> None:
    """When the work fails (a database error, or the side connection could not be set up before
    it began), the queries it did not finish fail with it rather than leave the search waiting;
    the search then runs them as one statement each (chat.candidates.fetch_candidates)."""
    exc = done.exception()
    if exc is not None:
        for half in halves:
            if not half.done():
                half.set_exception(exc)
