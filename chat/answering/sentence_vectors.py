"""The vectors of the sentences an extractive answer scores, remembered between questions.

The sources of an answer are RSE segments cut to the answer's budget, so their sentences are not
the chunks stored at ingestion; but the same passages come back for many questions, and embedding
their ~100 sentences anew was most of an answer's cost. A process-local LRU keyed by the model and
a hash of the text gives each sentence's vector once per process (measured against storing them at
ingestion in docs/scaling.md, "Answers per second"): the same vectors as embedding afresh, and no
schema, migration or ingestion change.

ANSWER_VECTOR_CACHE (settings) is the number of texts kept per process (0: none); an entry is a
384-d float32 row and its key, about 1.7 KB.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

# texts -> (len(texts), dims) L2-normalised float32
Embed = Callable[[list[str]], np.ndarray]


class VectorCache:
    """An LRU of text vectors, safe to share between a process's threads."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._rows: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._rows)

    def vectors(self, texts: Sequence[str], embed: Embed, *, model: str) -> np.ndarray:
        """One row per text, in order: remembered rows, and the others embedded in one call to
        `embed` (only the texts not remembered, each once) and remembered."""
        keys = [(model, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
                for text in texts]
        found: dict[tuple[str, bytes], np.ndarray] = {}
        with self._lock:
            for key in keys:
                row = self._rows.get(key)
                if row is not None:
                    self._rows.move_to_end(key)
                    found[key] = row
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            # Embedded outside the lock: other threads' look-ups must not wait for the model.
            fresh = np.asarray(embed(list(missing.values())), dtype=np.float32)
            for key, row in zip(missing, fresh, strict=True):
                row.setflags(write=False)  # shared by every caller: nobody may change it in place
                found[key] = row
            with self._lock:
                for key in missing:
                    self._rows[key] = found[key]
                    self._rows.move_to_end(key)
                while len(self._rows) > self.capacity:
                    self._rows.popitem(last=False)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[key] for key in keys])

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()


_cache: VectorCache | None = None
_cache_lock = threading.Lock()


def process_cache() -> VectorCache:
    """This process's cache, sized by settings.ANSWER_VECTOR_CACHE."""
    global _cache
    if _cache is None:
        from django.conf import settings

        with _cache_lock:
            if _cache is None:
                _cache = VectorCache(settings.ANSWER_VECTOR_CACHE)
    return _cache


def text_vectors(texts: Sequence[str]) -> np.ndarray:
    """The configured model's vectors of `texts` (L2-normalised float32 rows), remembered per process."""
    from django.conf import settings

    from corpus.ingest.embed import embed_texts  # loads the model: only when answering

    cache = process_cache()
    if cache.capacity <= 0:
        return embed_texts(list(texts))
    return cache.vectors(texts, embed_texts, model=settings.EMBEDDING_MODEL)
