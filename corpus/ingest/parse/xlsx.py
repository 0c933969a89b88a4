"""XLSX: each worksheet a section headed "Sheet: NAME", its rows a Markdown table (tables.py), a title
row above the table a line of text before it (tables.title_rows).

The archive is checked first (archive.check_zip: inflated size and XML elements bounded); openpyxl
then streams each sheet (read_only) and gives formulas as the values Excel last computed
(data_only). A sheet's declared dimensions are ignored: a file can claim A1:XFD1048576 for two
cells, and openpyxl pads every row to the claimed width; every cell it yields, padding
included, counts against MAX_SPREADSHEET_CELLS.
"""

from __future__ import annotations

import io

from corpus.ingest.parse.archive import check_zip
from corpus.ingest.parse.base import Heading, ParseError
from corpus.ingest.parse.sections import Sections
from corpus.ingest.parse.tables import CellBudget, cell_text, table_rows, table_text, title_rows

DAMAGED_MESSAGE = "The spreadsheet is damaged or is not an .xlsx workbook and could not be read."
_WHAT = "The spreadsheet"


def parse_xlsx(data: bytes) -> tuple[str, list[Heading], str | None]:
    """(text, one level-1 heading per non-empty sheet, the workbook's title property or None)."""
    import openpyxl

    check_zip(data, _WHAT, DAMAGED_MESSAGE)
    sections = Sections()
    budget = CellBudget(_WHAT)
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            for sheet in workbook.worksheets:
                sheet.reset_dimensions()
                rows = []
                for row in sheet.iter_rows():
                    budget.take(max(1, len(row)))
                    # The number format says how the sheet shows a number (a percentage: 0.925 as 92.5%).
                    cells = [cell_text(cell.value, getattr(cell, "number_format", None) or "") for cell in row]
                    budget.take(0, sum(map(len, cells)))
                    if any(cells):
                        rows.append(cells)
                titles, rows = title_rows(rows)
                table = table_text(table_rows(rows))
                if table:
                    sections.add(f"Sheet: {sheet.title}", level=1)
                    for title in titles:
                        sections.add(title)
                    sections.add(table)
            title = (workbook.properties.title or "").strip()
        finally:
            workbook.close()
    except ParseError:
        raise
    except Exception as exc:  # noqa: BLE001 - openpyxl/zipfile/XML parsers signal damage with many exception types
        raise ParseError(DAMAGED_MESSAGE) from exc
    return sections.text(), sections.headings, title or None
