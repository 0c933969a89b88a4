"""The embedding model's own tokenizer: token counts and character spans, loaded once per process.

Chunk sizes are measured in these tokens, so a chunk of `size` tokens is exactly what the model
will see. Long texts are tokenised once into a TokenIndex; the chunkers then count tokens between
any two character offsets with a binary search instead of re-tokenising candidate chunks.
"""

from __future__ import annotations

import itertools
import re
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from corpus.ingest.embed import model_path

# Texts longer than this are cut at word boundaries (line breaks where there are some) and encoded
# as a batch, which the Rust tokenizer spreads over all cores; the tokens are the same.
_BATCH_PIECE_CHARS = 16_000
# Pieces encoded at once: the tokenizer's Encoding objects of one group are alive at a time.
_GROUP_PIECES = 64
# Where a piece without a line break may end: after its last whitespace or ASCII punctuation mark
# (the tokenizer splits words at both).
_LAST_BREAK = re.compile(r".*[\s!-/:-@\[-`{-~]", re.DOTALL)

_lock = threading.Lock()
_tokenizer = None


def get_tokenizer():
    """The `tokenizers.Tokenizer` of settings.EMBEDDING_MODEL, from local files, without truncation."""
    global _tokenizer
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
                _tokenizer = _load_tokenizer()
    return _tokenizer


def _load_tokenizer():
    path = Path(model_path())
    # tokenizers/transformers are imported when the tokenizer is first needed: web processes
    # that never chunk do not pay for loading them.
    if (path / "tokenizer.json").is_file():
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    else:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True, use_fast=True)
        tokenizer = tokenizer.backend_tokenizer
    # The saved tokenizer truncates and pads to 128; counting needs every token of the text.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """Number of model tokens in `text`, special tokens ([CLS], [SEP]) not included."""
    if not text:
        return 0
    if len(text) <= _BATCH_PIECE_CHARS:
        return len(get_tokenizer().encode(text, add_special_tokens=False).ids)
    return len(tokenize(text))


def token_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of each model token of `text`, special tokens not included."""
    index = tokenize(text)
    return list(zip(index.starts.tolist(), index.ends.tolist(), strict=True))


@dataclass(frozen=True, eq=False)
class TokenIndex:
    """The tokens of one text as parallel arrays, for counting between character offsets.

    starts/ends: character span of each token; words: the number of the word (pre-token: a run of
    letters/digits, or one punctuation mark) each token belongs to, increasing through the text;
    ids: each token's id in the model's vocabulary.
    A cut between two words never changes how either side tokenises, so for cuts at word
    boundaries count(a, b) == count_tokens(text[a:b]).
    """

    starts: np.ndarray
    ends: np.ndarray
    words: np.ndarray
    ids: np.ndarray  # the model's token ids (int32), for late chunking

    def __len__(self) -> int:
        return len(self.starts)

    def count(self, start: int, end: int) -> int:
        """Tokens that begin in [start, end)."""
        return int(np.searchsorted(self.starts, end) - np.searchsorted(self.starts, start))

    def first_token_at(self, offset: int) -> int:
        """Index of the first token beginning at or after `offset` (len(self) if none)."""
        return int(np.searchsorted(self.starts, offset))

    @cached_property
    def word_starts(self) -> np.ndarray:
        """Character offset where each word begins."""
        return self.starts[self._word_first]

    @cached_property
    def word_ends(self) -> np.ndarray:
        """Character offset where each word ends."""
        last = np.append(self._word_first[1:] - 1, len(self.starts) - 1) if len(self.starts) else self._word_first
        return self.ends[last]

    @cached_property
    def _word_first(self) -> np.ndarray:
        """Token index of the first token of each word."""
        if not len(self.words):
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(np.diff(self.words, prepend=-1) != 0)

    @cached_property
    def is_word_first(self) -> np.ndarray:
        """True for tokens that begin a word: cutting just before them keeps every word whole."""
        flags = np.zeros(len(self.starts), dtype=bool)
        flags[self._word_first] = True
        return flags

    def safe_cut(self, offset: int) -> int:
        """`offset`, or the start of the word it falls inside (a cut there keeps words whole)."""
        i = int(np.searchsorted(self.word_starts, offset, side="right")) - 1
        if i >= 0 and self.word_starts[i] < offset < self.word_ends[i]:
            return int(self.word_starts[i])
        return offset


def tokenize(text: str) -> TokenIndex:
    """Tokenise `text` once, in pieces cut at word boundaries (in parallel, a group at a time).

    Memory stays proportional to the number of tokens (three integers each): the tokenizer's own
    per-token objects (about 500 bytes a token) exist for one group of pieces at a time, and no
    piece is longer than about 2 x _BATCH_PIECE_CHARS characters, so a 20 MB line costs no more
    than 20 MB of short lines."""
    tokenizer = get_tokenizer()
    bounds = _piece_bounds(text)
    starts_parts, ends_parts, word_parts, id_parts = [], [], [], []
    word_base = 0
    for group in range(0, len(bounds), _GROUP_PIECES):
        group_bounds = bounds[group: group + _GROUP_PIECES]
        encodings = tokenizer.encode_batch([text[a:b] for a, b in group_bounds], add_special_tokens=False)
        for (piece_start, _), encoding in zip(group_bounds, encodings, strict=True):
            n = len(encoding.ids)
            if not n:
                continue
            flat = np.fromiter(itertools.chain.from_iterable(encoding.offsets), dtype=np.int64, count=2 * n)
            starts_parts.append(flat[0::2] + piece_start)
            ends_parts.append(flat[1::2] + piece_start)
            words = np.fromiter((-1 if w is None else w for w in encoding.word_ids), dtype=np.int64, count=n)
            word_parts.append(words + word_base)
            word_base += int(words.max()) + 1
            id_parts.append(np.asarray(encoding.ids, dtype=np.int32))
        del encodings
    if not starts_parts:
        empty = np.zeros(0, dtype=np.int64)
        return TokenIndex(empty, empty, empty, np.zeros(0, dtype=np.int32))
    return TokenIndex(np.concatenate(starts_parts), np.concatenate(ends_parts), np.concatenate(word_parts),
                      np.concatenate(id_parts))


def _piece_bounds(text: str) -> list[tuple[int, int]]:
    """Consecutive (start, end) pieces of about _BATCH_PIECE_CHARS, each ending at a word boundary:
    after a newline within twice that length, else after a space or an ASCII punctuation mark (the
    tokenizer splits words there too), else anywhere (inside one enormous "word", which the
    tokenizer maps to [UNK] whole or in pieces alike)."""
    bounds = []
    start = 0
    length = len(text)
    while length - start > _BATCH_PIECE_CHARS:
        end = text.find("\n", start + _BATCH_PIECE_CHARS, start + 2 * _BATCH_PIECE_CHARS)
        if end >= 0:
            end += 1
        else:
            low = start + _BATCH_PIECE_CHARS // 2
            match = _LAST_BREAK.match(text, low, start + _BATCH_PIECE_CHARS)
            end = match.end() if match else start + _BATCH_PIECE_CHARS
        bounds.append((start, end))
        start = end
    bounds.append((start, length))
    return bounds
