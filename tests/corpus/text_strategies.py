"""Hypothesis strategies for document-like text, shared by the tokenizer and chunker tests."""

from __future__ import annotations

from hypothesis import strategies as st

_PIECES = [
    "the", "cat", "sat", "chunking", "tokenizer", "embeddings", "Django", "naïve", "café", "日本語",
    "x", "ab", "supercalifragilistic", "e.g.", "3.14", "don't", "(note)", "`code`", "#", "==",
    " ", " ", " ", "  ", ". ", ", ", "; ", "! ", "? ", "\n", "\n", "\n\n", "\n\n\n", "\t", "-",
    "\u200b", "\u00a0", "\u2028", "\x1c", "e\u0301", "🙂",
]

# Text made of words, punctuation, spaces, line and paragraph breaks, plus a few characters that
# tokenizers treat unusually (zero-width and exotic spaces, control characters, combining marks).
documents = st.lists(st.sampled_from(_PIECES), max_size=120).map("".join)

# Only words that are one token each, separated by single spaces: counts are then exact.
_SIMPLE_WORDS = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far"]
simple_documents = st.lists(st.sampled_from(_SIMPLE_WORDS), min_size=1, max_size=150).map(" ".join)
