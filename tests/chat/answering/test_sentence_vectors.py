"""The sentence vectors an extractive answer scores are remembered per process: the same vectors as
embedding afresh, each text embedded once."""

from __future__ import annotations

import numpy as np
import pytest

from chat.answering import sentence_vectors
from chat.answering.extractive import _model_vectors
from chat.answering.sentence_vectors import VectorCache, text_vectors
from corpus.ingest.embed import embed_query, embed_texts

SENTENCES = ["The worker retries a failed document eight times.",
             "Backups are copied to the second disk every night at two.",
             "Hybrid search fuses keyword and vector candidates."]


class CountingEmbed:
    """A fake model: each text's vector is its length in one dimension; remembers what it embedded."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_it_embeds_each_text_once_and_keeps_the_order():
    cache, embed = VectorCache(10), CountingEmbed()
    first = cache.vectors(["aa", "b", "aa"], embed, model="m")
    second = cache.vectors(["b", "ccc", "aa"], embed, model="m")
    assert embed.calls == [["aa", "b"], ["ccc"]]
    assert first[:, 0].tolist() == [2.0, 1.0, 2.0]
    assert second[:, 0].tolist() == [1.0, 3.0, 2.0]
    assert (cache.hits, cache.misses) == (3, 3)  # texts given without embedding, texts embedded


def test_it_forgets_the_least_recently_used_beyond_its_capacity():
    cache, embed = VectorCache(2), CountingEmbed()
    cache.vectors(["a", "bb"], embed, model="m")
    cache.vectors(["a"], embed, model="m")  # "a" used last: "bb" is the oldest
    cache.vectors(["ccc"], embed, model="m")
    assert len(cache) == 2
    cache.vectors(["a", "bb"], embed, model="m")
    assert embed.calls[-1] == ["bb"]


def test_another_model_does_not_share_vectors():
    cache, embed = VectorCache(10), CountingEmbed()
    cache.vectors(["same text"], embed, model="one")
    cache.vectors(["same text"], embed, model="two")
    assert embed.calls == [["same text"], ["same text"]]


def test_remembered_rows_cannot_be_changed_by_a_caller():
    cache = VectorCache(10)
    row = cache.vectors(["a"], CountingEmbed(), model="m")[0]
    row[0] = 99.0  # a copy: the cache's own row is untouched
    assert cache.vectors(["a"], CountingEmbed(), model="m")[0, 0] == 1.0


@pytest.fixture
def fresh_cache(monkeypatch, settings):
    settings.ANSWER_VECTOR_CACHE = 100
    monkeypatch.setattr(sentence_vectors, "_cache", None)


def test_the_cache_gives_the_vectors_fresh_computation_gives(fresh_cache, monkeypatch):
    fresh = embed_texts(SENTENCES)
    assert np.allclose(text_vectors(SENTENCES), fresh, atol=1e-5)

    def no_model(texts):
        raise AssertionError(f"embedded again: {texts}")

    monkeypatch.setattr("corpus.ingest.embed.embed_texts", no_model)
    again = text_vectors(list(reversed(SENTENCES)))
    assert np.allclose(again, fresh[::-1], atol=1e-5)


def test_the_answer_scores_with_the_same_query_and_sentence_vectors_as_before(fresh_cache):
    query = "How often are failed documents retried?"
    query_vector, vectors = _model_vectors(query, SENTENCES)
    assert np.allclose(query_vector, embed_query(query), atol=1e-5)
    assert np.allclose(vectors, embed_texts(SENTENCES), atol=1e-5)
    assert sentence_vectors.process_cache().misses == 4
    _model_vectors(query, SENTENCES)
    assert sentence_vectors.process_cache().hits == 4


def test_no_cache_when_its_size_is_zero(settings, monkeypatch):
    settings.ANSWER_VECTOR_CACHE = 0
    monkeypatch.setattr(sentence_vectors, "_cache", None)
    assert np.allclose(text_vectors(SENTENCES[:1]), embed_texts(SENTENCES[:1]), atol=1e-5)
    assert len(sentence_vectors.process_cache()) == 0
