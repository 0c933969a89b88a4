"""A document's text cut at its chunk boundaries, for the admin's preview.

Chunks tile the text (sliding-window collections excepted, where they overlap), so the text is
cut at every chunk start and end; each piece knows which chunks cover it and which begin there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    index: int
    start: int
    end: int


@dataclass(frozen=True)
class Piece:
    """text[start:end], covered by the chunks `covering` (indexes); `starts` begin at `start`."""

    start: int
    end: int
    text: str
    covering: tuple[int, ...]
    starts: tuple[int, ...]

    @property
    def overlap(self) -> bool:
        return len(self.covering) > 1

    @property
    def shade(self) -> int:
        """0 or 1, alternating from chunk to chunk; -1 for text no chunk covers."""
        return self.covering[0] % 2 if self.covering else -1


def pieces(text: str, spans: Iterable[Span]) -> list[Piece]:
    """The text cut at every boundary of `spans` (clamped to the text), in order; together the
    pieces give back the text."""
    spans = sorted((Span(s.index, max(0, s.start), min(len(text), s.end)) for s in spans),
                   key=lambda s: (s.start, s.index))
    cuts = sorted({0, len(text), *(s.start for s in spans), *(s.end for s in spans)})
    result: list[Piece] = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        covering = tuple(s.index for s in spans if s.start <= start and end <= s.end and s.start < s.end)
        starts = tuple(s.index for s in spans if s.start == start)
        result.append(Piece(start, end, text[start:end], covering, starts))
    return result
