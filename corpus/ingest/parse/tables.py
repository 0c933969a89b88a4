"""Rows of cells as Markdown tables whose rows stay next to their header.

A spreadsheet row quoted alone ("| Rent | 1200 |") does not say what its cells mean, so the
header row is repeated every few hundred characters: a table becomes a series of short Markdown
tables separated by blank lines, the places where the chunkers prefer to cut, so a chunk (and a
cited passage) of a long sheet starts with its column names. Reading is bounded by a CellBudget:
cells (empty ones in the used range included) and characters are counted as rows arrive.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence

from corpus.ingest.parse.limits import cells_error, max_spreadsheet_cells, max_text_chars, text_error

# A percentage format: "0%", "0.0%", "#,##0.00%" (the digits after the point are the decimals shown).
_PERCENT = re.compile(r"[0#?](?:\.([0#?]+))?%")
# Characters of rows under one copy of the header, so that a block, header included, fits in a
# chunk of the default size (200 tokens): table rows of numbers and short words run at 1.5-3
# characters per token.
BLOCK_CHARS = 300


class CellBudget:
    """Counts the cells and characters read from one file; raises the over-limit ParseError
    (cells: MAX_SPREADSHEET_CELLS, characters: MAX_DOCUMENT_CHARS) when either runs out."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.cells = 0
        self.chars = 0
        self._max_cells = max_spreadsheet_cells()
        self._max_chars = max_text_chars()

    def take(self, cells: int, chars: int = 0) -> None:
        self.cells += cells
        self.chars += chars
        if self.cells > self._max_cells:
            raise cells_error(self.what)
        if self.chars > self._max_chars:
            raise text_error()


def cell_text(value: object, number_format: str = "") -> str:
    """A cell value as table text: one line, "|" escaped; whole floats without ".0", dates
    without a midnight time, booleans as TRUE/FALSE, a number in a percentage format (a
    spreadsheet's `number_format`, "0.0%") as a percentage with its decimals (as a spreadsheet
    shows them)."""
    if value is None:
        return ""
    percent = _PERCENT.search(number_format)
    if isinstance(value, bool):
        text = "TRUE" if value else "FALSE"
    elif isinstance(value, (int, float)) and percent:
        text = f"{value * 100:.{len(percent.group(1) or '')}f}%"
    elif isinstance(value, float):
        text = str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    elif isinstance(value, dt.datetime):
        text = value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    elif isinstance(value, (dt.date, dt.time)):
        text = value.isoformat()
    else:
        text = str(value)
    return " ".join(text.split()).replace("|", "\\|")


def table_rows(rows: Iterable[Sequence[str]]) -> list[list[str]]:
    """The rows without empty rows and empty columns (a column is empty if no row has text in it)."""
    kept = [list(row) for row in rows if any(row)]
    width = max((len(row) for row in kept), default=0)
    used = [c for c in range(width) if any(c < len(row) and row[c] for row in kept)]
    return [[row[c] if c < len(row) else "" for c in used] for row in kept]


def title_rows(rows: Sequence[Sequence[str]]) -> tuple[list[str], list[list[str]]]:
    """(title lines, table rows): the rows above the first row of more than one cell that hold one
    cell each are a sheet's title or notes (Excel merges a title across the columns), not the
    table's header, and come back as lines of text ("|" unescaped). When no row holds more than one
    cell (a one-column list), every row is the table's."""
    for index, row in enumerate(rows):
        if sum(1 for cell in row if cell) > 1:
            titles = [" ".join(cell for cell in above if cell).replace("\\|", "|") for above in rows[:index]]
            return [title for title in titles if title], [list(row) for row in rows[index:]]
    return [], [list(row) for row in rows]


def table_text(rows: Sequence[Sequence[str]]) -> str:
    """Markdown tables of `rows` (already cleaned by table_rows); the first row is the header,
    repeated above every BLOCK_CHARS characters of rows. "" when there are no rows."""
    if not rows:
        return ""
    header = _line(rows[0]) + "\n" + _line(["---"] * len(rows[0]))
    blocks: list[str] = []
    block: list[str] = []
    size = 0
    for row in rows[1:]:
        line = _line(row)
        if block and size + len(line) > BLOCK_CHARS:
            blocks.append("\n".join([header, *block]))
            block, size = [], 0
        block.append(line)
        size += len(line) + 1
    blocks.append("\n".join([header, *block]))
    return "\n\n".join(blocks)


def _line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
