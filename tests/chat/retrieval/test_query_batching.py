"""Concurrent searches embed their queries together: each gets its own vectors, fewer passes run,
and a failing pass fails only the searches in it."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from chat.retrieval import query_batching
from chat.retrieval.query_batching import QueryBatcher, embed_queries
from corpus.ingest.embed import embed_texts


class SlowEmbed:
    """A fake model: a query's vector is [its length, its number]; each pass takes 50 ms."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.passes: list[list[str]] = []
        self.fail_on = fail_on

    def __call__(self, queries: list[str]) -> np.ndarray:
        self.passes.append(list(queries))
        time.sleep(0.05)
        if self.fail_on in queries:
            raise RuntimeError("the model failed")
        return np.array([[len(q), int(q.split()[-1])] for q in queries], dtype=np.float32)


def _concurrently(batcher: QueryBatcher, lists: list[list[str]]) -> list:
    results: list = [None] * len(lists)
    start = threading.Barrier(len(lists))

    def search(i: int) -> None:
        start.wait()
        try:
            results[i] = batcher.embed(lists[i])
        except RuntimeError as exc:
            results[i] = exc

    threads = [threading.Thread(target=search, args=(i,)) for i in range(len(lists))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_one_search_alone_is_embedded_at_once_in_its_own_pass():
    embed = SlowEmbed()
    vectors = QueryBatcher(embed, max_queries=16).embed(["query 7"])
    assert embed.passes == [["query 7"]]
    assert vectors.tolist() == [[7.0, 7.0]]


def test_concurrent_searches_share_passes_and_each_gets_its_own_rows():
    embed = SlowEmbed()
    batcher = QueryBatcher(embed, max_queries=4)
    lists = [[f"question {i}"] for i in range(12)] + [["two queries 100", "two queries 101"]]
    results = _concurrently(batcher, lists)
    for queries, vectors in zip(lists, results, strict=True):
        assert vectors.tolist() == [[len(q), int(q.split()[-1])] for q in queries]
    assert all(len(p) <= 4 for p in embed.passes)
    assert sorted(q for p in embed.passes for q in p) == sorted(q for qs in lists for q in qs)  # each once
    assert len(embed.passes) < len(lists)  # together, not one pass each


def test_a_failing_pass_fails_its_searches_and_the_next_ones_still_run():
    embed = SlowEmbed(fail_on="bad 0")
    batcher = QueryBatcher(embed, max_queries=1)  # one query a pass: only the bad one fails
    results = _concurrently(batcher, [["bad 0"], ["good 1"], ["good 2"]])
    assert isinstance(results[0], RuntimeError)
    assert [r.tolist() for r in results[1:]] == [[[6.0, 1.0]], [[6.0, 2.0]]]
    assert batcher.embed(["after 3"]).tolist() == [[7.0, 3.0]]  # not stuck busy


@pytest.fixture
def fresh_batcher(monkeypatch, settings):
    monkeypatch.setattr(query_batching, "QUERY_EMBEDDING_BATCH", 8)
    monkeypatch.setattr(query_batching, "_batchers", {})


def test_batched_query_vectors_are_those_of_each_query_alone(fresh_batcher):
    queries = [["How do I set the request timeout?"], ["Which converters can path() use?"],
               ["What does RSE do?", "hybrid search"]]
    alone = [embed_texts(q) for q in queries]
    together = _concurrently(QueryBatcher(embed_texts, max_queries=8), queries)
    for a, b in zip(alone, together, strict=True):
        assert np.allclose(a, b, atol=1e-5)
    assert np.allclose(embed_queries(queries[0]), alone[0], atol=1e-5)
    assert list(query_batching._batchers) == [None] and query_batching._batchers[None].passes == 1
