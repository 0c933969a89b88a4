"""DOCX: paragraphs and tables in document order; headings from the "Heading N" and "Title" styles.
A paragraph numbered as a list item (w:numPr of its own or of its style: "List Bullet", "List
Number") is a Markdown list item, as Markdown, reStructuredText and OpenDocument lists read: "- "
or "3. ", indented four spaces a level, the items of one list a line each (word_lists).
A paragraph in a code style (pandoc's "Source Code", Word's "HTML Preformatted", LibreOffice's
"Preformatted Text") is code: a run of them is one fenced code block, as Markdown writes code, so
that it is kept whole in a chunk and never quoted as a sentence.
A table of at least two rows and two columns is a Markdown table whose first row is the header, as
spreadsheets and OpenDocument tables are (tables.py); a smaller one (a box around a paragraph) its
cells' text.

The archive is checked first (corpus.ingest.parse.archive: inflated size and markup elements
bounded), and text stops accumulating at the document text limit (sections.Sections).
"""

from __future__ import annotations

import io
import re

from corpus.ingest.parse.archive import check_zip
from corpus.ingest.parse.base import Heading, ParseError
from corpus.ingest.parse.sections import CODE_STYLES, Sections
from corpus.ingest.parse.tables import cell_text, table_rows, table_text
from corpus.ingest.parse.word_lists import Numbering

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
        numbering = Numbering.of(document)
        in_list = False
        code: list[str] = []
        for item in document.iter_inner_content():
            if not isinstance(item, Table) and _style_name(item) in CODE_STYLES:
                code.append(item.text)
                in_list = False
                continue
            if code:
                sections.add_code(code)
                code = []
            if isinstance(item, Table):
                in_list = False
                sections.add(_table_text(item))
                continue
            level = _heading_level(item)
            marker = numbering.marker(item) if level is None else ""
            # An empty paragraph adds nothing (and millions of them cost nothing).
            if sections.add(item.text, level=level, marker=marker, tight=bool(marker) and in_list):
                in_list = bool(marker)
        if code:
            sections.add_code(code)
        core_title = document.core_properties.title
    except ParseError:
        raise
    except Exception as exc:  # noqa: BLE001 - python-docx/lxml/zipfile signal damage with many exception types
        raise ParseError(DAMAGED_MESSAGE) from exc
    title = (core_title or "").strip() or sections.title()
    return sections.text(), sections.headings, title or None


def _style_name(paragraph) -> str:
    return (paragraph.style.name if paragraph.style is not None else "") or ""


def _heading_level(paragraph) -> int | None:
    name = _style_name(paragraph)
    if name == "Title":
        return 0
    match = _HEADING_STYLE.fullmatch(name or "")
    return int(match.group(1)) if match else None


def _table_text(table) -> str:
    """The table as Markdown (tables.table_text), or its cells' text a line per row, joined by " | ",
    when it is smaller than two rows by two columns. A merged cell is written once, in its first
    column; the columns it spans after that are empty, so the cells after it stay under their header."""
    rows = []
    for row in table.rows:
        cells = []
        previous = None
        for cell in row.cells:
            cells.append("" if cell._tc is previous else cell_text(cell.text))
            previous = cell._tc
        rows.append(cells)
    rows = table_rows(rows)
    if len(rows) >= 2 and len(rows[0]) >= 2:
        return table_text(rows)
    return "\n".join(" | ".join(cell for cell in row if cell) for row in rows)
