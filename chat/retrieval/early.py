"""The keyword halves of a hybrid search, started before its queries are embedded.

Embedding a query keeps the model busy for 20-30 ms on this kind of machine, and the keyword half
of a hybrid search needs the query's words, not its vector (chat.retrieval.candidates.run_keyword_half). It
runs meanwhile on a side connection (chat/retrieval/side_connection.py), on the other core, so after the
embedding only the vector half, fusion and RSE are left: 0.86-0.92x the total time of the same
search on one connection (`manage.py bench_search`, docs/evaluation.md). This pays only with the
query embedded on one torch thread (corpus.ingest.embed.embed_queries): with two threads on two cores,
the embedding beside the keyword half nearly doubled.

Reading which collections are searched (the caller's permission query) goes to the side
connection too, first: the keyword halves need their ids, and the search needs them only once its
queries are embedded.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from django.db.models import QuerySet

from chat.retrieval import side_connection
from chat.retrieval.candidates import CandidateSet, run_keyword_half
from corpus.models import Collection


@dataclass
class EarlyKeywordSearch:
    collections: Future[list[tuple[int, str]]]  # each searched collection's id and chunker
    halves: list[Future[CandidateSet]]  # a query's keyword half, for fetch_candidates' `keyword_half`


def searched_collections(collections: QuerySet[Collection]) -> list[tuple[int, str]]:
    return list(collections.values_list("id", "chunker"))


def start_keyword_halves(*, queries: Sequence[str], collections: QuerySet[Collection],
                         candidates: int) -> EarlyKeywordSearch | None:
    """Read the collections, then start each query's keyword half, one after the other on a side
    connection. None when no side connection may be used: inside a transaction (it could not see
    the caller's uncommitted rows), when disabled, or when every side connection is busy (under
    load, queueing for one would be slower than one statement on the caller's own connection)."""
    if not side_connection.available():
        return None
    found: Future[list[tuple[int, str]]] = Future()
    halves: list[Future[CandidateSet]] = [Future() for _ in queries]

    def run() -> None:
        found.set_running_or_notify_cancel()
        rows = searched_collections(collections)
        found.set_result(rows)
        collection_ids = [collection_id for collection_id, _ in rows]
        for query, half in zip(queries, halves, strict=True):
            half.set_running_or_notify_cancel()
            half.set_result(run_keyword_half(query=query, collection_ids=collection_ids, candidates=candidates)
                            if collection_ids else CandidateSet([], None))

    submitted = side_connection.try_submit(run)
    if submitted is None:
        return None
    submitted.add_done_callback(lambda done: _fail_unfinished([found, *halves], done))
    return EarlyKeywordSearch(found, halves)


def _fail_unfinished(futures: list[Future], done: Future) -> None:
    """When the work fails (a database error, or the side connection could not be set up before
    it began), what it did not finish fails with it rather than leave the search waiting; the
    search then reads the collections itself and runs each query as one statement
    (chat.retrieval.candidates.fetch_candidates)."""
    exc = done.exception()
    if exc is not None:
        for future in futures:
            if not future.done():
                future.set_exception(exc)
