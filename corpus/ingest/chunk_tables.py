"""Chunk cuts moved out of the Markdown tables that spreadsheets, CSV files and PDF tables are read
as (corpus.ingest.parse.tables): a row quoted, found or shown without its header row does not say
what its cells mean. Pure.

A table block is a header line, its "| --- |" rule and the rows under it, up to a line that is no
row. A cut inside a block moves to the block's start, so the whole block (header and rows) begins
the next chunk; when that chunk would then pass the size bound (the block is larger than a
chunk), the cut moves to the nearest row start instead, so at least no row is cut in half. A cut
never moves where it would push a chunk over the bound or past a neighbouring cut.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass

_ROW = re.compile(r"^[^\S\n]*\|.*\|[^\S\n]*$", re.MULTILINE)
_RULE = re.compile(r"^[^\S\n]*\|?[^\S\n]*:?-{3,}:?[^\S\n]*(?:\|[^\S\n]*:?-{3,}:?[^\S\n]*)*\|?[^\S\n]*$")


@dataclass(frozen=True)
class TableBlock:
    start: int  # the header line's first character
    end: int  # just after the last row (its newline excluded)
    rows: tuple[int, ...]  # each line's first character, header and rule included


def table_blocks(text: str) -> list[TableBlock]:
    """The Markdown table blocks of `text`, in order."""
    blocks: list[TableBlock] = []
    lines = list(_ROW.finditer(text))
    index = 0
    while index + 1 < len(lines):
        header, rule = lines[index], lines[index + 1]
        if rule.start() != header.end() + 1 or not _RULE.match(rule.group(0)):
            index += 1
            continue
        rows = [header, rule]
        index += 2
        while index < len(lines) and lines[index].start() == rows[-1].end() + 1:
            rows.append(lines[index])
            index += 1
        blocks.append(TableBlock(header.start(), rows[-1].end(), tuple(row.start() for row in rows)))
    return blocks


def cuts_outside_tables(text: str, cuts: list[int], count: Callable[[int, int], int], size: int) -> list[int]:
    """`cuts` (sorted chunk starts) with those inside a table block moved (see the module
    docstring); `count(a, b)` is the number of tokens in text[a:b]."""
    blocks = table_blocks(text)
    if not blocks or not cuts:
        return cuts
    starts = [block.start for block in blocks]
    moved: list[int] = []
    for i, cut in enumerate(cuts):
        previous = moved[-1] if moved else 0
        following = cuts[i + 1] if i + 1 < len(cuts) else len(text)
        b = bisect_right(starts, cut) - 1
        if b < 0 or not blocks[b].start < cut < blocks[b].end:
            moved.append(cut)
            continue
        block = blocks[b]
        row = block.rows[bisect_right(block.rows, cut) - 1]
        later = bisect_left(block.rows, cut)
        later_row = block.rows[later] if later < len(block.rows) else None
        for candidate in (block.start, row, later_row):
            if (candidate is not None and previous < candidate < following
                    and count(previous, candidate) <= size and count(candidate, following) <= size):
                moved.append(candidate)
                break
        else:
            moved.append(cut)
    return moved
