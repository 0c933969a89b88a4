"""Synthetic chunks that look like a real collection's, in bulk, for the benchmarks at scale.

Each synthetic chunk is made from one real chunk (its "base"): the base's sentences, shuffled,
about a quarter of them swapped for sentences of another real chunk, so the text reads like the
corpus and keyword queries meet the corpus's word statistics. Its vector is the base's embedding
plus Gaussian noise, renormalised: vectors cluster around real embeddings as real chunks about
the same topics do, which uniform random vectors (what HNSW finds unrealistically easy) do not.

The noise is calibrated on a sample whose recombined texts are really embedded: the mean cosine
between a recombined text's embedding and its base is measured, and the noise is set so that
noisy vectors sit at the same mean cosine from their base (for a unit vector b and noise
N(0, s^2 I_d), cos(b, b + n) ~ 1 / sqrt(1 + s^2 d)).

Rows go in with COPY (binary, vectors as pgvector's binary form), 100 chunks per document; the
BM25 postings are written by the table's own statement triggers, as for any insert.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from pgvector.psycopg import register_vector

from corpus.ingest import pipeline
from corpus.ingest.embed import embed_texts
from corpus.models import Chunk, Collection, Document

CHUNKS_PER_DOCUMENT = 100
SWAP_SHARE = 0.25
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")


@dataclass
class Bases:
    """The real chunks synthetic ones are drawn from: their sentences and unit embeddings."""

    sentences: list[list[str]]
    vectors: np.ndarray  # (n, dims) float32, unit rows

    @classmethod
    def of(cls, collection: Collection, limit: int = 20000) -> Bases:
        rows = list(Chunk.objects.filter(document__collection=collection, embedding__isnull=False)
                    .order_by("id").values_list("text", "embedding")[:limit])
        if len(rows) < 50:
            raise ValueError(f"The collection {collection.slug!r} has too few embedded chunks ({len(rows)}).")
        sentences = [[s for s in _SENTENCE_END.split(text.strip()) if s] or [text] for text, _ in rows]
        vectors = np.array([np.asarray(v, dtype=np.float32) for _, v in rows])
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return cls(sentences, vectors)

    def recombine(self, base: int, rng: np.random.Generator) -> str:
        own = list(self.sentences[base])
        rng.shuffle(own)
        other = self.sentences[int(rng.integers(len(self.sentences)))]
        swaps = max(1, round(len(own) * SWAP_SHARE)) if len(own) > 1 else 0
        for j in range(swaps):
            own[j] = other[j % len(other)]
        return " ".join(own)


def calibrate_noise(bases: Bases, rng: np.random.Generator, sample: int = 64) -> tuple[float, float]:
    """(sigma, measured mean cosine): the noise that puts synthetic vectors as far from their
    base as really embedded recombinations are."""
    picks = rng.choice(len(bases.vectors), size=min(sample, len(bases.vectors)), replace=False)
    texts = [bases.recombine(int(i), rng) for i in picks]
    embedded = embed_texts(texts)
    cosine = float(np.mean(np.sum(embedded * bases.vectors[picks], axis=1)))
    cosine = min(max(cosine, 0.05), 0.999)
    dims = bases.vectors.shape[1]
    return math.sqrt((1.0 / cosine ** 2 - 1.0) / dims), cosine


def _copy_chunks(rows: list[tuple]) -> None:
    raw = connection.connection  # the psycopg connection under Django's
    register_vector(raw)
    with raw.cursor() as cursor, cursor.copy(
            'COPY corpus_chunk (document_id, chunk_index, text, start, "end", heading_path, context, '
            "token_count, embedding, in_graph) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["int8", "int4", "text", "int4", "int4", "text", "text", "int4", "vector", "bool"])
        for row in rows:
            copy.write_row(row)


def add_synthetic_chunks(collection: Collection, count: int, bases: Bases, sigma: float, rng: np.random.Generator,
                         *, progress: Callable[[int], None] | None = None) -> None:
    """Append `count` synthetic chunks to `collection`, in documents of CHUNKS_PER_DOCUMENT,
    one transaction per document batch. `progress(added_so_far)` after each batch."""
    connection.ensure_connection()
    done = Document.objects.filter(collection=collection).count()
    added = 0
    dims = settings.EMBEDDING_DIMENSIONS
    while added < count:
        documents, rows = [], []
        batch_end = min(count, added + 20 * CHUNKS_PER_DOCUMENT)
        pieces_per_doc = []
        while added < batch_end:
            n = min(CHUNKS_PER_DOCUMENT, batch_end - added)
            picks = rng.integers(len(bases.vectors), size=n)
            texts = [bases.recombine(int(i), rng) for i in picks]
            noisy = bases.vectors[picks] + rng.standard_normal((n, dims)).astype(np.float32) * sigma
            noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
            pieces_per_doc.append((texts, noisy))
            documents.append(Document(
                collection=collection, source=f"synthetic/{collection.slug}/{done + len(documents):06}.txt",
                title=f"Synthetic {done + len(documents)}", text="\n\n".join(texts), media_type="text/plain",
                status=Document.Status.READY))
            added += n
        with transaction.atomic():
            Document.objects.bulk_create(documents)
            for document, (texts, noisy) in zip(documents, pieces_per_doc, strict=True):
                offset = 0
                for i, (text, vector) in enumerate(zip(texts, noisy, strict=True)):
                    end = offset + len(text) + (2 if i < len(texts) - 1 else 0)
                    # In the graph: the HNSW index is built after the load (corpus/graph/).
                    rows.append((document.pk, i, text, offset, end, "", "", len(text) // 4, vector, True))
                    offset = end
            _copy_chunks(rows)
        done += len(documents)
        if progress:
            progress(added)


def fresh_documents(collection: Collection, bases: Bases, rng: np.random.Generator,
                    count: int) -> list[tuple[Document, pipeline.Built]]:
    """`count` new documents of CHUNKS_PER_DOCUMENT synthetic chunks, built and waiting to be published
    (status embedding), as the ingestion pipeline hands them to its publish step."""
    dims = bases.vectors.shape[1]
    documents = Document.objects.bulk_create(
        Document(collection=collection, source=f"publish/{time.time_ns()}-{n}.txt", title="publish",
                 content_hash=f"{n:064x}", status=Document.Status.EMBEDDING) for n in range(count))
    builds = []
    for document in documents:
        picks = rng.integers(len(bases.vectors), size=CHUNKS_PER_DOCUMENT)
        texts = [bases.recombine(int(i), rng) for i in picks]
        noisy = bases.vectors[picks] + rng.standard_normal((len(picks), dims)).astype(np.float32) * 0.02
        chunks, offset = [], 0
        for i, (text, vector) in enumerate(zip(texts, noisy, strict=True)):
            chunks.append(Chunk(document_id=document.pk, chunk_index=i, text=text, start=offset,
                                end=offset + len(text), token_count=len(text) // 4,
                                embedding=(vector / np.linalg.norm(vector)).tolist()))
            offset += len(text)
        builds.append(pipeline.Built(
            content_hash=document.content_hash, signature="bench", title="publish", text="".join(texts),
            media_type="text/plain", author="", created=None, modified=None, pages=[], summary="",
            chunks=chunks, model=collection.embedding_model, inputs=texts))
    return list(zip(documents, builds, strict=True))


# The indexes a bulk load builds after it instead of maintaining row by row.
BULK_INDEXES = ("chunk_embedding_hnsw", "bm25_posting_by_impact")


def drop_bulk_indexes() -> list[str]:
    """Drop BULK_INDEXES; returns their definitions for rebuild_indexes()."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)", [list(BULK_INDEXES)])
        found = dict(cursor.fetchall())
        for name in found:
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')
    return [found[name] for name in BULK_INDEXES if name in found]


def rebuild_indexes(definitions: list[str], *, memory: str = "3GB", workers: int = 2) -> None:
    """Build the dropped indexes again with bulk settings (HNSW builds in parallel, in memory)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SET maintenance_work_mem = '{memory}'")
        cursor.execute(f"SET max_parallel_maintenance_workers = {int(workers)}")
        for definition in definitions:
            cursor.execute(definition)
        cursor.execute("RESET maintenance_work_mem; RESET max_parallel_maintenance_workers")
