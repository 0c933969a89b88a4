"""Folding compatibility characters, so that the stored text reads and searches as plain words.

PDF text keeps typographic ligatures ("ﬁle" is not "file" to keyword search, to a quote or to a
reader's Ctrl+F); documents also carry full-width forms, non-breaking and other fixed-width
spaces, mathematical alphanumerics, Arabic presentation forms and soft hyphens. Each such
character becomes what Unicode's compatibility decomposition (NFKC) gives for it. Forms whose
look carries meaning keep it: superscripts and subscripts ("m²"), fractions, circled and squared
forms; so do spacing accents (their NFKC is a space plus a combining mark) and Hangul
compatibility letters (they would join into syllables).

fold_document() folds a parsed document's text and moves its heading and page offsets with it,
so chunks, highlights and pages index the folded text exactly. Pure.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from dataclasses import replace

from corpus.ingest.parse.base import Heading, ParsedDocument

_FOLDED_KINDS = {"<compat>", "<font>", "<noBreak>", "<wide>", "<narrow>", "<small>", "<vertical>", "<initial>",
                 "<medial>", "<final>", "<isolated>"}
# Invisible in print, but they split words for search: soft hyphen, zero-width space, a BOM
# inside the text (word joiners and zero-width (non-)joiners shape scripts and stay).
_DROPPED = "\u00ad\u200b\ufeff"
_LAST_FOLDED = 0x2FFFF  # compatibility characters end in the Supplementary Ideographic Plane


@functools.cache
def _folds() -> tuple[dict[str, str], re.Pattern]:
    folds = {character: "" for character in _DROPPED}
    for code in range(0xA0, _LAST_FOLDED + 1):
        character = chr(code)
        kind = unicodedata.decomposition(character).split(" ", 1)[0]
        if kind not in _FOLDED_KINDS:
            continue
        folded = unicodedata.normalize("NFKC", character)
        if folded == character or any(unicodedata.combining(c) or "\u1100" <= c <= "\u11ff" for c in folded):
            continue
        folds[character] = folded
    pattern = re.compile("[" + "".join(re.escape(c) for c in sorted(folds)) + "]")
    return folds, pattern


class Folded:
    """A folded text and the map from offsets of the original text to offsets of the folded one."""

    def __init__(self, text: str, positions: list[int], shifts: list[int]):
        self.text = text
        self._positions = positions  # original offsets of the folded characters, ascending
        self._shifts = shifts  # the change in length up to and including each of them

    def offset(self, original: int) -> int:
        """Where the character at `original` (or the end, at len(original text)) is in the folded text."""
        before = bisect.bisect_left(self._positions, original)
        return original + (self._shifts[before - 1] if before else 0)


def fold_text(text: str) -> Folded:
    """`text` with compatibility characters folded, and its offset map."""
    if text.isascii():
        return Folded(text, [], [])
    folds, pattern = _folds()
    positions: list[int] = []
    shifts: list[int] = []
    shift = 0

    def fold(match: re.Match) -> str:
        nonlocal shift
        folded = folds[match.group()]
        shift += len(folded) - 1
        positions.append(match.start())
        shifts.append(shift)
        return folded

    return Folded(pattern.sub(fold, text), positions, shifts)


def fold_line(text: str) -> str:
    """A title or heading, folded."""
    return fold_text(text).text


def fold_document(document: ParsedDocument) -> ParsedDocument:
    """The document with its text, title and headings folded and its offsets moved to match."""
    folded = fold_text(document.text)
    headings = [Heading(folded.offset(h.start), h.level, fold_line(h.title)) for h in document.headings]
    return replace(document, text=folded.text, title=fold_line(document.title), headings=headings,
                   pages=[folded.offset(p) for p in document.pages])
