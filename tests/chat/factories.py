"""Rows for retrieval tests, created directly (no ingestion pipeline)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from corpus.models import Chunk, Collection, Document


def make_collection(slug: str, **fields) -> Collection:
    return Collection.objects.create(slug=slug, name=slug.title(), **fields)


def make_document(collection: Collection, source: str, chunks: Sequence[str], *, title: str = "",
                  embeddings: np.ndarray | None = None, context: str = "") -> Document:
    """A document whose text is the chunks concatenated; one Chunk row per piece."""
    text = "".join(chunks)
    document = Document.objects.create(collection=collection, source=source, title=title or source, text=text,
                                       status=Document.Status.READY)
    rows, offset = [], 0
    for i, piece in enumerate(chunks):
        rows.append(Chunk(document=document, chunk_index=i, text=piece, start=offset, end=offset + len(piece),
                          context=context,
                          embedding=None if embeddings is None else [float(x) for x in embeddings[i]]))
        offset += len(piece)
    Chunk.objects.bulk_create(rows)
    return document


def random_unit_vectors(n: int, dims: int = 384, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, dims)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)
