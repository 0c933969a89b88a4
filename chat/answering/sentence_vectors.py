"""The vectors of the sentences an extractive answer scores, stored in Postgres and shared by every
process.

Embedding the ~100 sentences of an answer's sources was nearly all of its cost. Each sentence's
vector is stored once, keyed by the model and a hash of the text as scored (chat.models.SentenceVector):
filled ahead for each document's sources when it is published (chat.answering.sentence_fill), and
on every miss by the answer that embedded it. An answer reads its sentences' vectors in one query
and embeds only what is missing, in one call, with the question. Stored as float16 (768 bytes for
384-d; within 1e-3 of fresh computation per component): half the disk of float32, and the scores
move by about 1e-5 (docs/scaling.md, "Answers per second").

The model is settings.EMBEDDING_MODEL, the one answers score with: a row of another model is never
read, so changing the model can never mix two models' vectors.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction

from chat.models import SentenceVector

logger = logging.getLogger(__name__)

STORED_DTYPE = np.float16


def digest(text: str) -> bytes:
    """The 16-byte key of a text (with the model, a stored vector's identity)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def encode(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=STORED_DTYPE).tobytes()


def decode(data: bytes | memoryview) -> np.ndarray:
    return np.frombuffer(data, dtype=STORED_DTYPE).astype(np.float32)


def stored(model: str, digests: Sequence[bytes]) -> dict[bytes, np.ndarray]:
    """The stored vectors of `model` among `digests`, in one query: {digest: float32 row}."""
    if not digests:
        return {}
    rows = SentenceVector.objects.filter(model=model, digest__in=list(set(digests))).values_list("digest", "vector")
    return {bytes(key): decode(vector) for key, vector in rows}


def store(model: str, rows: Sequence[tuple[int, bytes, np.ndarray]]) -> None:
    """Remember (document id, digest, vector) rows; those already stored are left as they are.
    A document deleted meanwhile loses its rows, nothing else fails: the store only saves work."""
    if not rows:
        return
    objects = [SentenceVector(document_id=document, model=model, digest=key, vector=encode(vector))
               for document, key, vector in rows]
    try:
        with transaction.atomic():
            SentenceVector.objects.bulk_create(objects, ignore_conflicts=True, batch_size=500)
    except IntegrityError:  # a document deleted since its text was read: store the others
        existing = set(_existing_documents({document for document, _, _ in rows}))
        kept = [o for o in objects if o.document_id in existing]
        if kept and len(kept) < len(objects):
            store(model, [(o.document_id, bytes(o.digest), decode(o.vector)) for o in kept])
    except DatabaseError:  # e.g. a read-only database: the answer is still right, only slower next time
        logger.warning("could not store sentence vectors", exc_info=True)


def _existing_documents(ids: set[int]) -> list[int]:
    from corpus.models import Document

    return list(Document.objects.filter(pk__in=ids).values_list("pk", flat=True))


def text_vectors(query: str, texts: Sequence[str], documents: Sequence[int | None], *,
                 query_vector: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The query's vector and one row per text (L2-normalised float32), with the configured model:
    the stored rows, and the others embedded with the query in one call and stored under the
    document holding each (`documents`, one per text; None: not stored). `query_vector`, when the
    caller has it already (the search embedded the question with this model), is used as is."""
    from chat.retrieval.query_batching import embed_queries
    from corpus.ingest.embed import embed_texts  # loads the model: only when answering

    model = settings.EMBEDDING_MODEL
    keys = [digest(text) for text in texts]
    found = stored(model, keys)
    missing: dict[bytes, str] = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
    if query_vector is None:
        query_vector = np.asarray(embed_queries([query], model=model)[0], dtype=np.float32)
    fresh = np.asarray(embed_texts(list(missing.values()), model=model), dtype=np.float32) if missing else []
    new_rows: dict[bytes, int | None] = {}
    for key, row in zip(missing, fresh, strict=True):
        # Rounded as stored: an answer never depends on whether its vectors were stored already.
        found[key] = decode(encode(row))
    for key, document in zip(keys, documents, strict=True):
        if key in missing and document is not None:
            new_rows.setdefault(key, document)
    store(model, [(document, key, found[key]) for key, document in new_rows.items()])
    if not keys:
        return query_vector, np.zeros((0, query_vector.shape[0]), dtype=np.float32)
    return query_vector, np.stack([found[key] for key in keys])
