"""corpus.ingest.chunk_vectors: the one decision of which vectors a collection's chunks get."""

from __future__ import annotations

import numpy as np
import pytest

from corpus.ingest.chunk_vectors import chunk_vectors
from corpus.ingest.embed import blend_neighbours
from corpus.models import Collection

INPUTS = ["first chunk", "second chunk", "third chunk", "fourth chunk"]
LATE = np.full((4, 3), 7.0, dtype=np.float32)


def one_hot(texts: list[str]) -> np.ndarray:
    """A stand-in model: chunk i gets the i-th unit vector, so any blending shows."""
    return np.eye(len(texts), 4, dtype=np.float32)


def vectors(mode: str, *, model: str, chunker: str = Collection.Chunker.RECURSIVE, documents=None) -> np.ndarray:
    collection = Collection(slug="c", name="C", embedding_mode=mode, chunker=chunker)
    return chunk_vectors(collection, model, INPUTS, documents=documents, embed=one_hot, late=lambda: LATE)


@pytest.fixture
def model(settings) -> str:
    return settings.EMBEDDING_MODEL


def test_plain_chunks_are_embedded_alone(model):
    assert np.array_equal(vectors(Collection.EmbeddingMode.PLAIN, model=model), one_hot(INPUTS))


def test_neighbour_blending_stays_within_each_document(model, settings):
    got = vectors(Collection.EmbeddingMode.NEIGHBOURS, model=model, documents=[1, 1, 2, 2])
    weight = Collection.NEIGHBOUR_WEIGHT
    assert np.allclose(got[:2], blend_neighbours(one_hot(INPUTS)[:2], weight))
    assert np.allclose(got[2:], blend_neighbours(one_hot(INPUTS)[2:], weight))
    assert got[1, 2] == 0 and got[2, 1] == 0  # nothing crosses from one document to the next


def test_late_chunking_only_with_the_model_it_runs_and_when_the_caller_can(model, settings):
    assert np.array_equal(vectors(Collection.EmbeddingMode.LATE, model=model), LATE)
    other = vectors(Collection.EmbeddingMode.LATE, model="another-model")  # a re-embed pending: per chunk, blended
    assert np.allclose(other, blend_neighbours(one_hot(INPUTS), Collection.NEIGHBOUR_WEIGHT))
    collection = Collection(slug="c", name="C", embedding_mode=Collection.EmbeddingMode.LATE)
    without_late = chunk_vectors(collection, model, INPUTS, embed=one_hot)  # a re-embed cannot late-chunk
    assert np.allclose(without_late, other)


def test_overlapping_chunks_are_never_blended(model):
    got = vectors(Collection.EmbeddingMode.NEIGHBOURS, model=model, chunker=Collection.Chunker.SLIDING)
    assert np.array_equal(got, one_hot(INPUTS))
