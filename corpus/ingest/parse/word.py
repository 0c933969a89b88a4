"""DOCX: paragraphs and tables in document order; headings from the "Heading N" and "Title" styles.

The archive is checked first (corpus.ingest.parse.archive: inflated size and markup elements
bounded), and text stops accumulating at the document text limit (sections.Sections).
"""

from __future__ import annotations

import io
import re

from corpus.ingest.parse.archive import check_zip
from corpus.ingest.parse.base import Heading, ParseError
from corpus.ingest.parse.sections import Sections

DAMAGED_MESSAGE = "The Word file is damaged or is not a .docx document and could not be read."
_HEADING_STYLE = re.compile(r"Heading ([1-9])")


def parse_docx(data: bytes) -> tuple[str, list[Heading], str | None]:
    """(text, headings, title from the document properties or its Title paragraph, or None)."""
    import docx
    from docx.table import Table

    check_zip(data, "The Word file", DAMAGED_MESSAGE)
    sections = Sections()
    try:
        document = docx.Document(io.BytesIO(data))
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                sections.add(_table_text(item))
            else:
                # An empty paragraph adds nothing (and millions of them cost nothing).
                sections.add(item.text, level=_heading_level(item))
        core_title = document.core_properties.title
    except ParseError:
        raise
    except Exception as exc:  # noqa: BLE001 - python-docx/lxml/zipfile signal damage with many exception types
        raise ParseError(DAMAGED_MESSAGE) from exc
    title = (core_title or "").strip() or sections.title()
    return sections.text(), sections.headings, title or None


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
