"""Words OCR ran together, split again: "dependingon" → "depending on", "95pounds" → "95 pounds".

A recognition model reads a line of print as a run of characters and guesses the spaces; where
words stand close it leaves one out. A joined token is split when it is not a dictionary word and
a split makes words: each part a word of at least MIN_PART letters or a short function word
(SHORT_WORDS), the cheapest split winning (a part costs 1, one of the commonest words less), then
the one whose first parts are longest. A number run into a word ("95pounds") is
split when the word is one of at least MIN_NUMBER_WORD letters ("10kg", "3rd", "4GB" stay). Names
and capitalised words the list knows are words, so "Washington" stays whole.

The dictionary is Debian's wamerican word list (data/words.txt.gz, its licence beside it),
loaded once per process (~70,000 words, a few MB).
"""

from __future__ import annotations

import functools
import gzip
import re
from itertools import pairwise
from pathlib import Path

WORDS_FILE = Path(__file__).resolve().parent / "data" / "words.txt.gz"
MIN_JOINED = 6  # shorter tokens are left as they are
MIN_PART = 3
MIN_NUMBER_WORD = 4
# Two-letter words a split may give: the function words OCR most often runs into their neighbour.
SHORT_WORDS = frozenset("a an as at be by do go he i if in is it me my no of on or so to up us we".split())
MAX_WORD = 24  # letters of the longest part looked for
# The most frequent English words: a split into them costs COMMON_COST a part, any other part 1
# (the list knows no frequencies: "for a parcel" must beat "fora parcel", "pounds is" "pound sis").
COMMON_WORDS = SHORT_WORDS | frozenset(
    "the and you that was for are with his they this have from one had but not what all were when your can "
    "said there use each which she how their will other about out many then them these some her would make "
    "like him into time has look two more see way could people than first been call who its now find long "
    "down day did get come made may part".split())
COMMON_COST = 0.25

_TOKEN = re.compile(r"[A-Za-z0-9]+")
_RUNS = re.compile(r"\d+|[A-Za-z]+")


@functools.cache
def dictionary() -> frozenset[str]:
    with gzip.open(WORDS_FILE, "rt", encoding="ascii") as lines:
        return frozenset(line.strip() for line in lines if line.strip())


def split_joined_words(text: str) -> str:
    """`text` with each token that is words run together written as those words."""
    return _TOKEN.sub(lambda match: _split(match.group(0)), text)


def _split(token: str) -> str:
    if len(token) < MIN_JOINED:
        return token
    if not token.isalpha():
        return _split_numbers(token)
    if not (token.islower() or token[1:].islower()):
        return token  # "OpenSSL", "HTTPServer": a name, not a joint
    lower = token.lower()
    if lower in dictionary():
        return token
    cuts = _segments(lower)
    if cuts is None:
        return token
    return " ".join(token[a:b] for a, b in pairwise([0, *cuts]))


def _split_numbers(token: str) -> str:
    """A token of numbers and words run together ("of95poundsis"), apart, when every run of
    letters is a word of at least MIN_NUMBER_WORD letters or words run together; else as it is."""
    runs = _RUNS.findall(token)
    out = []
    for run in runs:
        if run.isdigit():
            out.append(run)
            continue
        split = _split(run) if len(run) >= MIN_JOINED else run
        if len(run) < MIN_NUMBER_WORD or (split == run and run.lower() not in dictionary()):
            return token
        out.append(split)
    return " ".join(out)


@functools.lru_cache(maxsize=4096)
def _segments(word: str) -> tuple[int, ...] | None:
    """The ends of the parts of the best split of `word` into words (the lowest cost, then the
    longest first parts: "members pay", not "member spay"), None when there is none or it would
    be one part."""
    words = dictionary()
    # best[i]: (cost, ends) of the best split of word[:i].
    best: list[tuple[float, tuple[int, ...]] | None] = [None] * (len(word) + 1)
    best[0] = (0.0, ())
    for end in range(1, len(word) + 1):
        for start in range(max(0, end - MAX_WORD), end):
            if best[start] is None or not _part(word[start:end], words):
                continue
            cost, ends = best[start]
            candidate = (cost + (COMMON_COST if word[start:end] in COMMON_WORDS else 1.0), (*ends, end))
            if (best[end] is None or candidate[0] < best[end][0]
                    or (candidate[0] == best[end][0] and candidate[1] > best[end][1])):
                best[end] = candidate
    found = best[len(word)]
    return found[1] if found is not None and len(found[1]) > 1 else None


def _part(part: str, words: frozenset[str]) -> bool:
    return part in SHORT_WORDS or (len(part) >= MIN_PART and part in words)
