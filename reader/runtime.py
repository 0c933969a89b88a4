"""The reader at run time: the committed int8 ONNX model and its tokenizer, with onnxruntime.

`score(question, texts)` gives, for each candidate text (reader.candidates.candidate_text), the
probability that it answers the question. The model is loaded once a process (`load()`; the app
loads it before forking, so the web and worker processes share its pages).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from lib.onnx_sessions import load_session

MODEL_DIR = Path(__file__).parent / "model"
MAX_TOKENS = 128


class Reader:
    """An ONNX cross-encoder and its tokenizer (tokenizer.json, the `tokenizers` library)."""

    def __init__(self, model: Path, tokenizer: Path) -> None:
        from tokenizers import Tokenizer

        # One inference thread, none of its own: safe to load before the fork (lib.onnx_sessions).
        self._session = load_session(model)
        self._inputs = {i.name for i in self._session.get_inputs()}
        tokenizer_ = Tokenizer.from_file(str(tokenizer))
        tokenizer_.enable_truncation(max_length=MAX_TOKENS, strategy="only_second")
        tokenizer_.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tokenizer_
        self._lock = threading.Lock()  # a Tokenizer with padding/truncation set is not shared across threads

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Probabilities (0-1), one per (question, candidate) pair."""
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        with self._lock:
            encoded = self._tokenizer.encode_batch([(q, c) for q, c in pairs])
        feeds = {"input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                 "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                 "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64)}
        logits = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        return (1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64).reshape(-1)))).astype(np.float32)

    def score(self, question: str, texts: Sequence[str]) -> np.ndarray:
        return self.score_pairs([(question, t) for t in texts])


def available() -> bool:
    return (MODEL_DIR / "reader.onnx").exists() and (MODEL_DIR / "tokenizer.json").exists()


@lru_cache(maxsize=1)
def load() -> Reader:
    """The committed reader, loaded once a process."""
    return Reader(MODEL_DIR / "reader.onnx", MODEL_DIR / "tokenizer.json")


def score(question: str, texts: Sequence[str]) -> np.ndarray:
    """The committed reader's probability that each text answers `question`."""
    return load().score(question, texts)
