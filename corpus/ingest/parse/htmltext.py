"""HTML: the text a reader sees, one block per line, headings kept as their own lines, each
definition list entry (<dt> terms, then their <dd>) a paragraph of its own, and a data table (its
first row header cells, no table inside it) a Markdown table as spreadsheets are (tables.py), so a
row quoted alone still says what its cells mean; any other table a line per row, cells joined by " | ".

Scripts, styles, navigation, page headers and footers, asides and hidden elements are dropped.
A <header>/<footer> inside an <article>, <main> or <section> is kept: there it holds the
article's own title, not site furniture. Navigation not marked up as <nav> is dropped too: an
element of a class that names it (breadcrumbs, menus, texinfo's "nav-panel") and texinfo's
`<div class="header">` of Next/Previous/Up links (told by their rel), which otherwise leave
"Next: ..., Up: ... [Contents][Index]" before every section of a manual. A page with more
elements than MAX_MARKUP_ELEMENTS is refused before lxml builds its tree; libxml2 nests at most
255 levels deep (deeper content is dropped), which bounds the recursive walk.
"""

from __future__ import annotations

import re

import lxml.html
from lxml import etree

from corpus.ingest.parse.base import Heading, ParseError, name_title, title_heading
from corpus.ingest.parse.limits import check_markup
from corpus.ingest.parse.tables import CellBudget, cell_text, table_rows, table_text
from corpus.ingest.parse.text import decode_text

_SKIP = frozenset({"script", "style", "nav", "aside", "noscript", "template", "head", "iframe", "svg", "canvas",
                   "object", "embed", "button", "select", "textarea", "input", "map", "dialog"})
_PAGE_FURNITURE = frozenset({"header", "footer"})
_CONTENT_SECTIONS = frozenset({"article", "main", "section"})
_NAV_CLASSES = frozenset({"nav", "navbar", "nav-panel", "navigation", "breadcrumb", "breadcrumbs", "menu",
                          "mini-toc", "skip-link", "skiplink"})
_NAV_RELS = frozenset({"next", "prev", "previous", "up"})
_SKIP_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
_BLOCK = frozenset({"address", "article", "blockquote", "body", "dd", "details", "div", "dl", "dt", "fieldset",
                    "figcaption", "figure", "footer", "form", "header", "hr", "li", "main", "ol", "p", "section",
                    "summary", "table", "tbody", "thead", "tfoot", "tr", "ul", "caption", "html"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_CELLS = frozenset({"td", "th"})
# HTML's own cap on colspan (browsers clamp larger values), taken for rowspan too.
MAX_SPAN = 1000
_SPAN = re.compile(r"[0-9]{1,4}")
_SPACES = re.compile(r"\s+")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


class _TextBuilder:
    """Accumulates visible text: inline runs with collapsed spaces, breaks between blocks."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.pending_break = ""
        self.at_line_start = True
        self.marker = ""  # a list item's "- " or "3. ", written before the item's first text

    def write(self, text: str, *, verbatim: bool = False) -> int | None:
        """Append text; returns the offset where it begins, or None if nothing was written."""
        if not verbatim:
            text = _SPACES.sub(" ", text)
            if self.at_line_start:
                text = text.lstrip(" ")
        if not text:
            return None
        if self.marker and text.strip():
            text, self.marker = self.marker + text, ""
        if self.pending_break and self.length:
            self._append(self.pending_break)
        self.pending_break = ""
        start = self.length
        self._append(text)
        self.at_line_start = text.endswith("\n")
        return start

    def brk(self, newlines: int) -> None:
        """Ask for a line (1) or paragraph (2) break before the next text."""
        if self.parts and not self.at_line_start and self.parts[-1].endswith(" "):
            stripped = self.parts[-1].rstrip(" ")
            self.length -= len(self.parts[-1]) - len(stripped)
            self.parts[-1] = stripped
        if len(self.pending_break) < newlines:
            self.pending_break = "\n" * newlines
        self.at_line_start = True

    def _append(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def text(self) -> str:
        return "".join(self.parts)


def _visible_text(element, *, line_break: str = "") -> str:
    """element.text_content() without what a reader never sees (scripts, styles, hidden elements);
    a <br> as `line_break`."""
    parts = [element.text or ""]
    for child in element:
        tag = child.tag.lower() if isinstance(child.tag, str) else None
        if tag == "br":
            parts.append(line_break)
        elif tag is not None and not (tag in _SKIP or _hidden(child)):
            parts.append(_visible_text(child, line_break=line_break))
        parts.append(child.tail or "")
    return "".join(parts)


def _navigation(element) -> bool:
    """Navigation marked by class: one of _NAV_CLASSES, or a "header" whose links go next/prev/up
    (a page's header may hold its title, so the class alone does not make it navigation)."""
    classes = frozenset((element.get("class") or "").lower().split())
    if classes & _NAV_CLASSES:
        return True
    return "header" in classes and any(rel in _NAV_RELS for link in element.iter("a")
                                       for rel in (link.get("rel") or "").lower().split())


def _hidden(element) -> bool:
    style = (element.get("style") or "").replace(" ", "").lower()
    return (element.get("hidden") is not None or element.get("aria-hidden") == "true"
            or "display:none" in style or "visibility:hidden" in style
            or element.get("role") in _SKIP_ROLES)


class _Walker:
    def __init__(self) -> None:
        self.out = _TextBuilder()
        self.headings: list[Heading] = []
        # The places a page's spanned table cells fill beyond their own: hostile spans (colspan="1000"
        # on every cell) stop at the spreadsheet's cell limit.
        self.spanned = CellBudget("The HTML page")
        # The number the next item of each <ol> takes: counted as the walk goes, so a list of many
        # items costs one step an item (the dict holds each list, so no two lists share a key).
        self.numbers: dict = {}

    def walk(self, element, in_content: bool = False) -> None:
        tag = element.tag if isinstance(element.tag, str) else None
        if tag is None:  # a comment or processing instruction: only its tail is text
            self._tail(element)
            return
        tag = tag.lower()
        skip = (tag in _SKIP or _hidden(element) or (tag in _PAGE_FURNITURE and not in_content)
                or _navigation(element))
        if not skip:
            self._element(element, tag, in_content or tag in _CONTENT_SECTIONS)
        self._tail(element)

    def _tail(self, element) -> None:
        if element.tail:
            self.out.write(element.tail)

    def _element(self, element, tag: str, in_content: bool) -> None:
        out = self.out
        if tag in _HEADINGS:
            out.brk(2)
            title = _SPACES.sub(" ", _visible_text(element)).strip()
            if title:
                start = out.write(title)
                self.headings.append(Heading(start, _HEADINGS[tag], title))
            out.brk(2)
            return
        if tag == "pre":
            out.brk(2)
            out.write(_visible_text(element).strip("\n"), verbatim=True)
            out.brk(2)
            return
        if tag == "br":
            out.brk(1)
            return
        if tag == "table" and (rows := _data_table_rows(element, self.spanned)):
            out.brk(2)
            caption = element.find("caption")
            if caption is not None and not _hidden(caption):
                out.write(_visible_text(caption))
                out.brk(2)
            out.write(table_text(rows), verbatim=True)
            out.brk(2)
            return
        if tag in _CELLS and element.getprevious() is not None:
            out.write(" | ")
        block = tag in _BLOCK
        if block:
            out.brk(_break_before(element, tag))
        if tag == "li":
            out.marker = _list_marker(element, self.numbers)
        if element.text:
            out.write(element.text)
        for child in element:
            self.walk(child, in_content)
        if tag == "li":
            out.marker = ""  # an item without text writes none
        if block:
            out.brk(1 if tag in ("li", "tr", "dt") else 2)


def _list_marker(item, numbers: dict) -> str:
    """A list item's Markdown marker, as the chunker and the answer read lists: "- " in a <ul>,
    "3. " in an <ol> (counted from its start attribute in `numbers`, the walk's count for each list),
    indented four spaces a level of nesting."""
    lists = [a for a in item.iterancestors() if isinstance(a.tag, str) and a.tag.lower() in ("ul", "ol")]
    indent = "    " * max(0, len(lists) - 1)
    parent = item.getparent()
    if parent is None or not isinstance(parent.tag, str) or parent.tag.lower() != "ol":
        return f"{indent}- "
    if parent not in numbers:
        try:
            numbers[parent] = int(parent.get("start") or 1)
        except ValueError:
            numbers[parent] = 1
    number = numbers[parent]
    numbers[parent] = number + 1
    return f"{indent}{number}. "


def _data_table_rows(table, budget: CellBudget) -> list[list[str]]:
    """The rows of a data table as table_text() takes them (cell text on one line, "|" escaped), or
    [] for any other table: one whose first row is not a header (all <th> cells, or two or more
    cells all in bold, as older editors write a header), which does not say what its columns mean,
    or one holding a table (page layout)."""
    if table.find(".//table") is not None:
        return []
    cells = [[child for child in row if isinstance(child.tag, str) and child.tag.lower() in _CELLS]
             for row in table.iter("tr") if not _hidden(row)]
    if len(cells) < 2 or not cells[0]:
        return []
    if not (all(cell.tag.lower() == "th" for cell in cells[0])
            or (len(cells[0]) > 1 and all(_bold(cell) for cell in cells[0]))):
        return []
    rows = _spanned([[cell for cell in row if not _hidden(cell)] for row in cells], budget)
    return table_rows(rows) if rows[0] else []


def _bold(cell) -> bool:
    """Whether a cell holds text and all of it is inside <b> or <strong>."""
    def words(text: str) -> str:
        return " ".join(text.split())

    everything = words(_visible_text(cell, line_break=" "))
    bold = words(" ".join(_visible_text(b, line_break=" ") for b in cell.iter("b", "strong")
                          if not any(a.tag in ("b", "strong") for a in b.iterancestors() if a is not cell)))
    return bool(everything) and bold == everything


def _spanned(rows: list[list], budget: CellBudget) -> list[list[str]]:
    """The cells' texts on a grid: a cell spanning rows or columns (rowspan, colspan) fills each
    place it spans, as pandas.read_html does, so the cells after it stay under their own columns and
    a row quoted alone still holds the cell its first column shares with the rows above."""
    grid: dict[tuple[int, int], str] = {}
    for r, row in enumerate(rows):
        c = 0
        for cell in row:
            while (r, c) in grid:  # taken by a cell spanning down from a row above
                c += 1
            text = cell_text(_visible_text(cell, line_break=" "))
            down = min(_span(cell, "rowspan"), len(rows) - r)
            across = _span(cell, "colspan")
            budget.take(down * across - 1)
            for dr in range(down):
                for dc in range(across):
                    grid.setdefault((r + dr, c + dc), text)
            c += across
    width = max((c for _, c in grid), default=-1) + 1
    return [[grid.get((r, c), "") for c in range(width)] for r in range(len(rows))]


def _span(cell, attribute: str) -> int:
    """A cell's rowspan or colspan: 1 unless a whole number, at most MAX_SPAN."""
    value = (cell.get(attribute) or "").strip()
    return max(1, min(int(value), MAX_SPAN)) if _SPAN.fullmatch(value) else 1


def _break_before(element, tag: str) -> int:
    """Newlines before a block: a list item, table row or caption starts a line; a definition
    list's term starts a paragraph (unless it is one more term of the same definition) and its
    definition the next line, so each term and its definition are one paragraph of their own."""
    if tag == "dt":
        previous = element.getprevious()
        return 1 if previous is not None and isinstance(previous.tag, str) and previous.tag.lower() == "dt" else 2
    return 1 if tag in ("li", "tr", "dd", "summary", "caption") else 2


def html_source(data: bytes, *, charset: str | None = None, what: str = "The HTML page") -> str:
    """An HTML page's bytes as text lxml accepts, markup bombs refused (ParseError naming `what`).

    The charset is `charset` (a web server's Content-Type header) when given, else the one the page's
    <meta> declares in its first 4 KB, else UTF-8 or Windows-1252 (decode_text; a BOM wins over all).
    """
    check_markup(data, what)
    declared = _META_CHARSET.search(data[:4096])
    source = decode_text(data, declared=charset or (declared.group(1).decode("ascii") if declared else None))
    # lxml refuses str input that carries an XML encoding declaration (the text is decoded already).
    return _XML_DECLARATION.sub("", source, count=1)


def parse_html(data: bytes) -> tuple[str, list[Heading], str | None]:
    """(visible text, headings, <title> or None)."""
    source = html_source(data)
    if not source.strip():
        raise ParseError("The HTML page has no visible text.")
    try:
        root = lxml.html.document_fromstring(source)
    except (etree.ParserError, ValueError) as exc:
        raise ParseError("The HTML page could not be read.") from exc
    head = head_title(root)
    walker = _Walker()
    walker.walk(root)
    text = walker.out.text()
    return text, walker.headings, page_title(head, title_heading(walker.headings) or "") or None


def head_title(root) -> str:
    """The title a page's <head> gives: its og:title, else its <title> ("" when neither)."""
    for meta in root.iter("meta"):
        if meta.get("property") == "og:title" and (meta.get("content") or "").strip():
            return _SPACES.sub(" ", meta.get("content")).strip()
    title = root.find(".//title")
    return _SPACES.sub(" ", title.text_content()).strip() if title is not None else ""


def page_title(head: str, first_h1: str, location: str = "") -> str:
    """The title of an HTML page, one rule for uploaded files and web sources: its head's title
    (head_title), else its first <h1>, else the last part of its URL or file name without the
    extension ("https://example.org/zebras/index.html" gives "index", "https://example.org/" the
    host); "" when none of them says anything."""
    return head or first_h1 or name_title(location)
