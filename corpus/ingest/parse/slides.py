"""PPTX: each slide a section headed "Slide N: TITLE", then its text boxes, tables (Markdown,
tables.py) and grouped shapes in the slide's order, then its speaker notes.

The archive is checked first (archive.check_zip: inflated size and XML elements bounded), and the
text stops growing at the document text limit (sections.Sections).
"""

from __future__ import annotations

import io

from corpus.ingest.parse.archive import check_zip
from corpus.ingest.parse.base import Heading, ParseError
from corpus.ingest.parse.sections import Sections
from corpus.ingest.parse.tables import CellBudget, table_rows, table_text

DAMAGED_MESSAGE = "The presentation is damaged or is not a .pptx file and could not be read."
_WHAT = "The presentation"


def parse_pptx(data: bytes) -> tuple[str, list[Heading], str | None]:
    """(text, one level-1 heading per slide with text, the title property or the first slide's
    title, or None)."""
    from pptx import Presentation

    check_zip(data, _WHAT, DAMAGED_MESSAGE)
    sections = Sections()
    budget = CellBudget(_WHAT)
    first_title = ""
    try:
        presentation = Presentation(io.BytesIO(data))
        for number, slide in enumerate(presentation.slides, start=1):
            title_shape = slide.shapes.title
            title = _one_line(title_shape.text_frame.text) if title_shape is not None else ""
            first_title = first_title or title
            title_id = title_shape.shape_id if title_shape is not None else None
            blocks = [block for shape in slide.shapes if shape.shape_id != title_id
                      for block in _shape_blocks(shape, budget)]
            notes = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
            notes_text = notes.text.strip() if notes is not None else ""
            if not (title or any(block.strip() for block in blocks) or notes_text):
                continue
            sections.add(f"Slide {number}: {title}" if title else f"Slide {number}", level=1)
            for block in blocks:
                sections.add(block)
            if notes_text:
                sections.add(f"Notes: {_lines(notes_text)}")
        core_title = (presentation.core_properties.title or "").strip()
    except ParseError:
        raise
    except Exception as exc:  # noqa: BLE001 - python-pptx/lxml/zipfile signal damage with many exception types
        raise ParseError(DAMAGED_MESSAGE) from exc
    return sections.text(), sections.headings, core_title or first_title or None


def _shape_blocks(shape, budget: CellBudget) -> list[str]:
    """The text of one shape: its text frame, its table, or the shapes of its group (libxml2
    nests at most 256 deep, which bounds the recursion)."""
    if shape.has_text_frame:
        return [_lines(shape.text_frame.text)]
    if shape.has_table:
        rows = []
        for row in shape.table.rows:
            cells = [_one_line(cell.text).replace("|", "\\|") for cell in row.cells]
            budget.take(max(1, len(cells)), sum(map(len, cells)))
            rows.append(cells)
        return [table_text(table_rows(rows))]
    if hasattr(shape, "shapes"):  # a group
        return [block for child in shape.shapes for block in _shape_blocks(child, budget)]
    return []


def _lines(text: str) -> str:
    # python-pptx writes a line break inside a paragraph as a vertical tab.
    return text.replace("\v", "\n")


def _one_line(text: str) -> str:
    return " ".join(text.split())
