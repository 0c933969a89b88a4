"""Which vectors a collection's chunks get: the one place that decides, for ingestion, for a
publish after the collection switched model, and for a re-embed (corpus.reembed).

- Late chunking (Collection.EmbeddingMode.LATE) runs EMBEDDING_MODEL over the document's tokens and
  pools them per chunk: only ingestion has the document's text at hand, and only EMBEDDING_MODEL's
  tokenizer is loaded for it, so elsewhere such a collection gets per-chunk vectors, blended.
- Otherwise each chunk is embedded alone (its context header and text, embedding_input), then,
  unless the collection says PLAIN or its chunks overlap, blended with its neighbours within its
  document (corpus.ingest.embed.blend_neighbours, Collection.NEIGHBOUR_WEIGHT).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from django.conf import settings

from corpus.ingest import embed as embedding
from corpus.models import Collection


def chunk_vectors(collection: Collection, model: str, inputs: Sequence[str], *,
                  documents: Sequence[int] | None = None,
                  embed: Callable[[list[str]], np.ndarray] | None = None,
                  late: Callable[[], np.ndarray] | None = None) -> np.ndarray:
    """One row per chunk (`inputs`: what is embedded for each, in order) of `collection` with
    `model`. `late`: the caller can late-chunk (ingestion), used when the collection asks for it
    and `model` is EMBEDDING_MODEL. `embed`: how the per-chunk vectors are made (default
    embed_texts with `model`; ingestion's reports progress). `documents`: each row's document, for
    blending within documents only (default: all rows are one document's, in chunk order)."""
    if late is not None and collection.embedding_mode == Collection.EmbeddingMode.LATE \
            and model == settings.EMBEDDING_MODEL:
        return late()
    vectors = embed(list(inputs)) if embed is not None else embedding.embed_texts(list(inputs), model=model)
    if collection.embedding_mode == Collection.EmbeddingMode.PLAIN or collection.overlapping:
        return vectors
    if documents is None:
        return embedding.blend_neighbours(vectors, Collection.NEIGHBOUR_WEIGHT)
    out = np.empty_like(vectors)
    start = 0
    for i in range(1, len(documents) + 1):
        if i == len(documents) or documents[i] != documents[start]:
            out[start:i] = embedding.blend_neighbours(vectors[start:i], Collection.NEIGHBOUR_WEIGHT)
            start = i
    return out
