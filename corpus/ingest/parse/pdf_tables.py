"""PDF tables kept as tables: the pages that draw ruling lines are read again by pdfplumber, and a
page where it finds a ruled table gets its text from there, each table as Markdown rows under
their header (corpus.ingest.parse.tables, as a spreadsheet's) at its place on the page, the text
around it as lines.

Only ruled tables are found (pdfplumber's "lines" strategy): a table laid out with spaces alone
looks like any text to a PDF library. pdfplumber costs ~50 ms of CPU per page here (pypdf ~17
ms), so it reads only the pages whose content could hold a ruled table: MIN_RECTANGLES
rectangles, or MIN_RULES vertical and MIN_RULES horizontal lines (a page of text with a rule
under its header, or underlined links, does not qualify). A page it cannot read keeps its text
layer as pypdf gave it.
"""

from __future__ import annotations

import io
import logging
import re

from corpus.ingest.parse.tables import cell_text, table_rows, table_text

logger = logging.getLogger(__name__)

MIN_RECTANGLES = 4  # the cells of a 2 × 2 table
MIN_RULES = 3  # the rules of a 2 × 2 table
_NUMBER = rb"(-?[\d.]+)"
# A rectangle ("x y w h re") and a straight line ("x1 y1 m x2 y2 l") in a content stream.
_RECTANGLE = re.compile(rb"[\d.]\s+re\s")
_LINE = re.compile(_NUMBER + rb"\s+" + _NUMBER + rb"\s+m\s+" + _NUMBER + rb"\s+" + _NUMBER + rb"\s+l\s")


def draws_rules(content: bytes) -> bool:
    """Whether a page's decoded content stream draws what a ruled table is drawn with."""
    if not content:
        return False
    if len(_RECTANGLE.findall(content)) >= MIN_RECTANGLES:
        return True
    vertical = horizontal = 0
    for x1, y1, x2, y2 in _LINE.findall(content):
        try:
            vertical += abs(float(x1) - float(x2)) < 0.5 <= abs(float(y1) - float(y2))
            horizontal += abs(float(y1) - float(y2)) < 0.5 <= abs(float(x1) - float(x2))
        except ValueError:
            continue
        if vertical >= MIN_RULES and horizontal >= MIN_RULES:
            return True
    return False


def tables_text(data: bytes, indexes: list[int]) -> dict[int, str]:
    """The text, tables as Markdown, of the pages at `indexes` (0-based) where pdfplumber finds a
    ruled table, by index; the other pages are left out."""
    if not indexes:
        return {}
    import pdfplumber

    texts: dict[int, str] = {}
    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            for index in indexes:
                page = pdf.pages[index]
                try:
                    text = _page_text(page)
                finally:
                    page.close()  # pdfplumber caches each page's objects until then
                if text is not None:
                    texts[index] = text
    except Exception:  # noqa: BLE001 - tables are a refinement: the text layer read by pypdf stands
        logger.info("pdfplumber could not read the tables of a PDF; its text layer is kept", exc_info=True)
        return {}
    return texts


def _page_text(page) -> str | None:
    tables = sorted(page.find_tables(), key=lambda t: t.bbox[1])
    if not tables:
        return None
    boxes = [t.bbox for t in tables]

    def outside(obj) -> bool:
        middle_x, middle_y = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
        return not any(x0 <= middle_x <= x1 and top <= middle_y <= bottom for x0, top, x1, bottom in boxes)

    around = page.filter(outside)
    parts: list[str] = []
    top = page.bbox[1]
    for table in tables:
        parts.append(_text_between(around, top, table.bbox[1]))
        rows = table_rows([[cell_text(cell) for cell in row] for row in table.extract()])
        parts.append(table_text(rows))
        top = table.bbox[3]
    parts.append(_text_between(around, top, page.bbox[3]))
    return "\n\n".join(part for part in parts if part.strip())


def _text_between(page, top: float, bottom: float) -> str:
    if bottom - top < 1:
        return ""
    x0, page_top, x1, page_bottom = page.bbox
    band = page.crop((x0, max(top, page_top), x1, min(bottom, page_bottom)))
    return (band.extract_text() or "").strip()
