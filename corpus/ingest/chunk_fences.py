"""Markdown fenced code blocks for the chunkers and for showing a piece of a document alone. Pure.

A chunk cut inside a fence leaves one chunk that opens a code block it never closes and the next
starting with code lines and a closing fence, after which Markdown reads the prose as code. So the
chunkers (corpus.ingest.chunk) do not cut inside a fence that fits in a chunk; a longer one is cut
between its lines, and refenced() gives each piece its fence back when it is shown or read alone.

Fences as CommonMark opens them (also corpus.ingest.parse.markup, chat.answering.blocks): a line of
three or more backticks or tildes, indented at most three spaces (a backtick fence's info string
holds no backtick), closed by a line of the same character at least as long with nothing after it,
or by the end of the text; but a bare run right under a line no longer than it is a reST underline.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)


@dataclass(frozen=True)
class Fence:
    start: int  # the opening line's first character
    end: int  # just after the closing line (its newline included), or the text's end
    opening_end: int  # the end of the opening line (before its newline)
    closing_start: int  # where the closing line starts (the text's end when the fence is never closed)
    marker: str  # the fence characters ("```"), which a closing line repeats


def fence_blocks(text: str) -> list[Fence]:
    """The fenced code blocks of `text`, in order."""
    fences: list[Fence] = []
    open_match: re.Match | None = None
    for match in _FENCE.finditer(text):
        marker, rest = match.group(1), match.group(2)
        if open_match is None:
            if not (marker[0] == "`" and "`" in rest) and not _underline(text, match):
                open_match = match
            continue
        opening = open_match.group(1)
        if marker[0] == opening[0] and len(marker) >= len(opening) and not rest.strip():
            end = match.end() + 1 if match.end() < len(text) else match.end()
            fences.append(Fence(open_match.start(), end, open_match.end(), match.start(), opening))
            open_match = None
    if open_match is not None:
        fences.append(Fence(open_match.start(), len(text), open_match.end(), len(text), open_match.group(1)))
    return fences


def _underline(text: str, match: re.Match) -> bool:
    """A bare run of fence characters right under a line at most as long: a reStructuredText section
    underline ("Options\n~~~~~~~"), which a .txt or .rst document (Django's docs) is full of."""
    if match.group(2).strip() or match.start() == 0:
        return False
    previous = text[text.rfind("\n", 0, match.start() - 1) + 1:match.start() - 1]
    return bool(previous.strip()) and len(previous.rstrip()) <= len(match.group(0).rstrip())


def fence_at(fences: list[Fence], offset: int, starts: list[int] | None = None) -> Fence | None:
    """The fence that `offset` falls strictly inside (after its start, before its end), if any;
    `starts`: the fences' starts, when the caller keeps them (for many look-ups)."""
    i = bisect_right([fence.start for fence in fences] if starts is None else starts, offset) - 1
    if i >= 0 and fences[i].start < offset < fences[i].end:
        return fences[i]
    return None


def refenced(text: str, start: int, end: int, fences: list[Fence] | None = None) -> str:
    """text[start:end] as Markdown that reads alone: when it begins inside a fence, that fence's
    opening line (or the part of it cut off) goes before it; when it ends inside one, a closing
    line (or the rest of it) goes after it."""
    before, after = fence_ends(text, start, end, fence_blocks(text) if fences is None else fences)
    piece = text[start:end]
    return before + (piece.rstrip("\n") + "\n" if after.startswith("\n") else piece) + after.lstrip("\n")


def fence_ends(text: str, start: int, end: int, fences: list[Fence]) -> tuple[str, str]:
    """What refenced() puts before and after text[start:end]: ("", "") when it cuts no fence; the
    text after starts with a newline when it is a whole closing line."""
    before = after = ""
    opened = fence_at(fences, start)
    if opened is not None:
        if start <= opened.opening_end:
            before = text[opened.start:start].lstrip()
        else:
            before = text[opened.start:opened.opening_end].lstrip() + "\n"
    closed = fence_at(fences, end)
    if closed is not None and end < len(text):
        after = "\n" + closed.marker + "\n" if end <= closed.closing_start else text[end:closed.end]
    return before, after
