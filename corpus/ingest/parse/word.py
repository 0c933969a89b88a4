"""DOCX: paragraphs and tables in document order; headings from the "Heading N" and "Title" styles.

The archive is checked first (corpus.ingest.parse.archive: inflated size and markup elements
bounded), and text stops accumulating at the document text limit.
"""

from __future__ import annotations

import io
import re

from corpus.ingest.parse.archive import check_zip
from corpus.ingest.parse.base import Heading, ParseError, normalise_newlines
from corpus.ingest.parse.limits import max_text_chars, text_error

DAMAGED_MESSAGE = "The Word file is damaged or is not a .docx document and could not be read."
_HEADING_STYLE = re.compile(r"Heading ([1-9])")
_BLOCK_SEPARATOR = "\n\n"


def parse_docx(data: bytes) -> tuple[str, list[Heading], str | None]:
    """(text, headings, title from the document properties or its Title paragraph, or None)."""
    import docx
    from docx.table import Table

    check_zip(data, "The Word file", DAMAGED_MESSAGE)
    limit = max_text_chars()
    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[tuple[str, int | None]] = []
        length = 0
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                block = (_table_text(item), None)
            else:
                block = (item.text, _heading_level(item))
            if not block[0]:
                continue  # an empty paragraph: nothing to keep (and millions of them cost nothing)
            length += len(block[0])
            if length > limit:
                raise text_error()
            blocks.append(block)
        core_title = document.core_properties.title
    except ParseError:
        raise
    except Exception as exc:  # noqa: BLE001 - python-docx/lxml/zipfile signal damage with many exception types
        raise ParseError(DAMAGED_MESSAGE) from exc
    parts: list[str] = []
    headings: list[Heading] = []
    length = 0
    for block_text, level in blocks:
        block_text = normalise_newlines(block_text).replace("\x00", "").strip()
        if not block_text:
            continue
        if length:
            parts.append(_BLOCK_SEPARATOR)
            length += len(_BLOCK_SEPARATOR)
        if level is not None:
            headings.append(Heading(length, level, " ".join(block_text.split())))
        parts.append(block_text)
        length += len(block_text)
    title = (core_title or "").strip()
    if not title:
        title = next((h.title for h in headings if h.level == 0), "") or \
            next((h.title for h in headings if h.level == 1), "")
    return "".join(parts), headings, title or None


def _heading_level(paragraph) -> int | None:
    name = paragraph.style.name if paragraph.style is not None else ""
    if name == "Title":
        return 0
    match = _HEADING_STYLE.fullmatch(name or "")
    return int(match.group(1)) if match else None


def _table_text(table) -> str:
    """One line per row, cells separated by " | " (a merged cell is written once)."""
    lines = []
    for row in table.rows:
        cells = []
        previous = None
        for cell in row.cells:
            if cell._tc is previous:
                continue
            previous = cell._tc
            cells.append(" ".join(cell.text.split()))
        lines.append(" | ".join(cells))
    return "\n".join(lines)
