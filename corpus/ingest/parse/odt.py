"""ODT (OpenDocument text): headings (text:h, with their outline level), paragraphs, lists and
tables (Markdown, tables.py) of content.xml in document order; the title from meta.xml.

A list item is a Markdown one, as Word's are (word_lists): its first paragraph gets "- ", or "3. "
("c. " when lettered) when its list style (content.xml or styles.xml; a nested list without one
takes its surrounding list's) numbers that level, counted from text:start-value and across a list
that continues numbering; the items of one list are a line each, each level indented four spaces.
An item's further paragraphs, and a list header, have no marker. A paragraph whose style is, or
derives from, a code style ("Preformatted Text", sections.CODE_STYLES) is code: a run of them is one
fenced block, as Word's are.

An ODT file is a ZIP of XML parts: archive.check_zip bounds it, xmlparts reads it without DTDs
or entities, and the text is bounded by sections.Sections. libxml2 nests at most 256 levels
deep, which bounds the recursive walk.
"""

from __future__ import annotations

import io
import zipfile

from corpus.ingest.parse.archive import check_zip
from corpus.ingest.parse.base import Heading, ParseError
from corpus.ingest.parse.sections import CODE_STYLES, Sections
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
_LIST, _LIST_ITEM, _LIST_HEADER = f"{{{_TEXT}}}list", f"{{{_TEXT}}}list-item", f"{{{_TEXT}}}list-header"
_LIST_STYLE, _LEVEL_NUMBER = f"{{{_TEXT}}}list-style", f"{{{_TEXT}}}list-level-style-number"
_STYLE_NAME, _LEVEL, _START_VALUE = f"{{{_TEXT}}}style-name", f"{{{_TEXT}}}level", f"{{{_TEXT}}}start-value"
_CONTINUE, _CONTINUE_LIST = f"{{{_TEXT}}}continue-numbering", f"{{{_TEXT}}}continue-list"
_STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
_NUM_FORMAT, _LIST_STYLE_NAME = f"{{{_STYLE}}}num-format", f"{{{_STYLE}}}name"
_INDENT = "    "
_STYLE_STYLE, _FAMILY = f"{{{_STYLE}}}style", f"{{{_STYLE}}}family"
_DISPLAY_NAME, _PARENT = f"{{{_STYLE}}}display-name", f"{{{_STYLE}}}parent-style-name"


def parse_odt(data: bytes) -> tuple[str, list[Heading], str | None]:
    """(text, headings, dc:title from meta.xml or the first heading, or None)."""
    check_zip(data, _WHAT, DAMAGED_MESSAGE)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            content = read_part(archive, "content.xml", DAMAGED_MESSAGE)
            meta = archive.read("meta.xml") if "meta.xml" in archive.namelist() else b""
            styles_xml = archive.read("styles.xml") if "styles.xml" in archive.namelist() else b""
    except ParseError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, RuntimeError) as exc:
        raise ParseError(DAMAGED_MESSAGE) from exc
    root = parse_xml(content, what=_WHAT, damaged=DAMAGED_MESSAGE)
    body = root.find(f"{{{_OFFICE}}}body/{{{_OFFICE}}}text")
    if body is None:
        raise ParseError(DAMAGED_MESSAGE)
    roots = [root]
    if styles_xml:
        roots.insert(0, parse_xml(styles_xml, what=_WHAT, damaged=DAMAGED_MESSAGE))
    styles = {name: levels for part in roots for name, levels in _list_styles(part).items()}
    sections = Sections()
    walk = _Walk(sections, CellBudget(_WHAT), styles, _code_styles(roots))
    walk.walk(body)
    walk.end_code()
    title = ""
    if meta:
        title_element = parse_xml(meta, what=_WHAT, damaged=DAMAGED_MESSAGE).find(f".//{{{_DC}}}title")
        title = " ".join((title_element.text or "").split()) if title_element is not None else ""
    return sections.text(), sections.headings, title or sections.title()


class _Walk:
    """The body's blocks into `sections`, lists as Markdown list items (see the module docstring)."""

    def __init__(self, sections: Sections, budget: CellBudget, styles: dict[str, dict[int, str]],
                 code_styles: frozenset[str] = frozenset()) -> None:
        self.sections, self.budget, self.styles, self.code_styles = sections, budget, styles, code_styles
        self.code: list[str] = []  # a run of paragraphs in a code style, written as one block when it ends
        self.marker = ""  # for the next paragraph: the marker of the list item it begins
        self.in_list = False  # the block before was a list item, so the next item follows it on the next line
        self.last_counts: dict[str, int] = {}  # list style -> the number its last top-level list reached

    def walk(self, element, depth: int = 0, style: str = "") -> None:
        sections = self.sections
        for child in element:
            tag = child.tag
            if tag in _SKIP or not isinstance(tag, str):
                continue
            if tag == _P and child.get(_STYLE_NAME) in self.code_styles:
                self.marker, self.in_list = "", False
                self.code.append(_inline(child))
                continue
            self.end_code()
            if tag == _H:
                self.marker, self.in_list = "", False
                sections.add(_inline(child), level=_outline_level(child))
            elif tag == _P:
                marker, self.marker = self.marker, ""
                if sections.add(_inline(child), marker=marker, tight=bool(marker) and self.in_list):
                    self.in_list = bool(marker)
            elif tag == _TABLE_TABLE:
                self.marker, self.in_list = "", False
                sections.add(table_text(table_rows(_table(child, self.budget))))
            elif tag == _LIST:
                self._list(child, depth, style)
            else:  # sections, frames and text boxes: their paragraphs
                self.walk(child, depth, style)

    def end_code(self) -> None:
        if self.code:
            self.sections.add_code(self.code)
            self.code = []

    def _list(self, element, depth: int, outer_style: str) -> None:
        style = element.get(_STYLE_NAME) or outer_style
        formats = self.styles.get(style, {})
        kind = formats.get(depth + 1, "")
        continues = element.get(_CONTINUE) == "true" or element.get(_CONTINUE_LIST) is not None
        number = self.last_counts.get(style, 0) if depth == 0 and continues else 0
        for item in element:
            if item.tag == _LIST_HEADER:
                self.walk(item, depth + 1, style)
            elif item.tag == _LIST_ITEM:
                start = _count(item.get(_START_VALUE)) if item.get(_START_VALUE) else None
                number = start if start is not None else number + 1
                sign = _sign(kind, number)
                self.marker = _INDENT * depth + sign + " "
                self.walk(item, depth + 1, style)
                self.marker = ""
        if depth == 0:
            self.last_counts[style] = number
            self.in_list = False  # a list after this one begins after a blank line


def _sign(kind: str, number: int) -> str:
    """A list item's "-", "3." or "c." for its level's style:num-format ("" for a bullet)."""
    if not kind:
        return "-"
    if kind in ("a", "A") and 1 <= number <= 26:
        return chr(ord(kind) + number - 1) + "."
    return f"{number}."


def _list_styles(root) -> dict[str, dict[int, str]]:
    """List style name -> {level: number format} of its numbered levels (bullets and images left out)."""
    found: dict[str, dict[int, str]] = {}
    for list_style in root.iter(_LIST_STYLE):
        levels = {}
        for level in list_style.iter(_LEVEL_NUMBER):
            if level.get(_NUM_FORMAT):  # "" numbers nothing
                levels[_count(level.get(_LEVEL))] = level.get(_NUM_FORMAT)
        found[list_style.get(_LIST_STYLE_NAME) or ""] = levels
    return found


def _code_styles(roots) -> frozenset[str]:
    """The paragraph styles (of styles.xml and content.xml's automatic ones) that are a code style or
    derive from one: LibreOffice writes "Preformatted_20_Text", shown as "Preformatted Text", and a
    paragraph formatted by hand gets an automatic style ("P3") whose parent it is."""
    parents: dict[str, str] = {}
    code: set[str] = set()
    for root in roots:
        for style in root.iter(_STYLE_STYLE):
            name = style.get(_LIST_STYLE_NAME) or ""
            if style.get(_FAMILY) != "paragraph" or not name:
                continue
            shown = style.get(_DISPLAY_NAME) or name.replace("_20_", " ")
            if shown in CODE_STYLES:
                code.add(name)
            parents[name] = style.get(_PARENT) or ""
    for name in parents:
        ancestor, seen = parents[name], {name}
        while ancestor and ancestor not in code and ancestor not in seen:  # a cycle ends the search
            seen.add(ancestor)
            ancestor = parents.get(ancestor, "")
        if ancestor in code:
            code.add(name)
    return frozenset(code)


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
