"""ODT (OpenDocument text): headings (text:h, with their outline level), paragraphs, lists and
tables (Markdown, tables.py) of content.xml in document order; the title from meta.xml.

An ODT file is a ZIP of XML parts: archive.check_zip bounds it, xmlparts reads it without DTDs
or entities, and the text is bounded by sections.Sections. libxml2 nests at most 256 levels
deep, which bounds the recursive walk.
"""

from __future__ import annotations

import io
import zipfile

from corpus.ingest.parse.archive import check_zip
from corpus.ingest.parse.base import Heading, ParseError
from corpus.ingest.parse.sections import Sections
from corpus.ingest.parse.tables import CellBudget, table_rows, table_text
from corpus.ingest.parse.xmlparts import parse_xml, read_part

DAMAGED_MESSAGE = "The OpenDocument file is damaged or is not an .odt document and could not be read."
_WHAT = "The OpenDocument file"

_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_DC = "http://purl.org/dc/elements/1.1/"
_H, _P = f"{{{_TEXT}}}h", f"{{{_TEXT}}}p"
_SPACE, _TAB, _BREAK = f"{{{_TEXT}}}s", f"{{{_TEXT}}}tab", f"{{{_TEXT}}}line-break"
_TABLE_TABLE, _TABLE_ROW, _TABLE_CELL = f"{{{_TABLE}}}table", f"{{{_TABLE}}}table-row", f"{{{_TABLE}}}table-cell"
# Not the document's own text: a table of contents repeats the headings, notes and comments
# interrupt the sentence they are attached to, tracked deletions were deleted.
_SKIP = frozenset({f"{{{_TEXT}}}table-of-content", f"{{{_TEXT}}}note", f"{{{_OFFICE}}}annotation",
                   f"{{{_TEXT}}}tracked-changes", f"{{{_TEXT}}}sequence-decls", f"{{{_TEXT}}}index-title",
                   f"{{{_TEXT}}}alphabetical-index", f"{{{_TEXT}}}bibliography"})
_MAX_SPACES = 100


def parse_odt(data: bytes) -> tuple[str, list[Heading], str | None]:
    """(text, headings, dc:title from meta.xml or the first heading, or None)."""
    check_zip(data, _WHAT, DAMAGED_MESSAGE)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            content = read_part(archive, "content.xml", DAMAGED_MESSAGE)
            meta = archive.read("meta.xml") if "meta.xml" in archive.namelist() else b""
    except ParseError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, RuntimeError) as exc:
        raise ParseError(DAMAGED_MESSAGE) from exc
    root = parse_xml(content, what=_WHAT, damaged=DAMAGED_MESSAGE)
    body = root.find(f"{{{_OFFICE}}}body/{{{_OFFICE}}}text")
    if body is None:
        raise ParseError(DAMAGED_MESSAGE)
    sections = Sections()
    _walk(body, sections, CellBudget(_WHAT))
    title = ""
    if meta:
        title_element = parse_xml(meta, what=_WHAT, damaged=DAMAGED_MESSAGE).find(f".//{{{_DC}}}title")
        title = " ".join((title_element.text or "").split()) if title_element is not None else ""
    return sections.text(), sections.headings, title or sections.title()


def _walk(element, sections: Sections, budget: CellBudget) -> None:
    for child in element:
        tag = child.tag
        if tag in _SKIP or not isinstance(tag, str):
            continue
        if tag == _H:
            sections.add(_inline(child), level=_outline_level(child))
        elif tag == _P:
            sections.add(_inline(child))
        elif tag == _TABLE_TABLE:
            sections.add(table_text(table_rows(_table(child, budget))))
        else:  # lists, list items, sections, frames and text boxes: their paragraphs
            _walk(child, sections, budget)


def _table(table, budget: CellBudget) -> list[list[str]]:
    rows = []
    for row in table.iter(_TABLE_ROW):
        cells = [" ".join(_inline(p) for p in cell.iter(_P, _H)).replace("|", "\\|")
                 for cell in row.iter(_TABLE_CELL)]
        cells = [" ".join(cell.split()) for cell in cells]
        budget.take(max(1, len(cells)), sum(map(len, cells)))
        rows.append(cells)
    return rows


def _inline(element) -> str:
    """The text of a paragraph or heading: spans and links as text, text:s as spaces, text:tab
    as a tab, text:line-break as a new line; notes and comments left out."""
    parts = [element.text or ""]
    for child in element:
        tag = child.tag
        if tag == _SPACE:
            parts.append(" " * min(_MAX_SPACES, _count(child.get(f"{{{_TEXT}}}c"))))
        elif tag == _TAB:
            parts.append("\t")
        elif tag == _BREAK:
            parts.append("\n")
        elif isinstance(tag, str) and tag not in _SKIP:
            parts.append(_inline(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _outline_level(heading) -> int:
    return max(1, min(9, _count(heading.get(f"{{{_TEXT}}}outline-level"))))


def _count(value: str | None) -> int:
    try:
        return int(value) if value else 1
    except ValueError:
        return 1
