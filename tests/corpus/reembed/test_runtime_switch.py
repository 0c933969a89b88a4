"""Changing the embedding runtime is a change of model: the re-embed path moves a collection from ONNX
float32 (the column's, the default) to the int8 graph and back, its vectors all of one runtime."""

import numpy as np
import pytest

from chat.retrieval import search
from corpus.ingest import embed
from corpus.ingest.pipeline import embedding_input
from corpus.models import Chunk, ChunkVector, Collection
from corpus.reembed import services as reembed
from corpus.vectors import column_model
from tests.chat.factories import make_collection, make_document

pytestmark = pytest.mark.django_db

DEFAULT = f"{embed.PACKAGED_MODEL}@{embed.ONNX}"
INT8 = f"{embed.PACKAGED_MODEL}@{embed.ONNX_INT8}"
TEXTS = ["Tomatoes need water twice a week in July. ", "Aphids leave when ladybirds arrive. ",
         "The shed door hinges want oil every spring. "]


def test_a_collection_moves_from_float32_to_int8_and_back_through_the_re_embed(settings,
                                                                              django_capture_on_commit_callbacks):
    assert settings.EMBEDDING_MODEL == column_model() == DEFAULT
    garden = make_collection("garden", embedding_mode=Collection.EmbeddingMode.PLAIN)
    assert garden.embedding_model == DEFAULT  # a new collection records the runtime it starts on
    document = make_document(garden, "notes.txt", TEXTS, embeddings=embed.embed_texts(TEXTS, model=DEFAULT))
    chunks = list(Chunk.objects.filter(document=document).order_by("chunk_index"))
    column = np.array([c.embedding for c in chunks], dtype=np.float32)
    inputs = [embedding_input(c.context, c.text) for c in chunks]

    assert reembed.reembed_start(collection=garden, model=INT8) is True
    with django_capture_on_commit_callbacks(execute=True):
        assert reembed.reembed_run(garden.pk) == "done"
    garden.refresh_from_db()
    assert garden.embedding_model == INT8
    stored = np.array([ChunkVector.objects.get(chunk=c, model=INT8).embedding for c in chunks], dtype=np.float32)
    assert np.allclose(stored, embed.embed_texts(inputs, model=INT8), atol=1e-5)  # int8's vectors, all of them
    assert np.abs(stored - column).max() > 1e-3  # not the float32 ones
    result = search(query="How often do tomatoes need water?", collections=Collection.objects.filter(pk=garden.pk),
                    mode="vector", k=1, rse=None)
    assert result.chunks[0].chunk_index == 0 and set(result.query_vectors) == {INT8}

    assert reembed.reembed_start(collection=garden, model=DEFAULT) is True
    with django_capture_on_commit_callbacks(execute=True):
        assert reembed.reembed_run(garden.pk) == "done"
    garden.refresh_from_db()
    assert garden.embedding_model == DEFAULT and not ChunkVector.objects.filter(chunk__document=document).exists()
    back = np.array([c.embedding for c in Chunk.objects.filter(document=document).order_by("chunk_index")],
                    dtype=np.float32)
    assert np.array_equal(back, column)  # the column's float32 vectors, kept all along
