"""The main text of a web page, as Markdown: what a web source stores as its document.

`page_document(body, url, content_type)` returns a Page (title, markdown). The main text comes from
trafilatura, which drops navigation, headers, footers, sidebars and cookie banners far better than
rules of our own would; tables stay tables, a link keeps its text (not its address). Headings stay
Markdown headings (#, ##, ...): trafilatura drops the <h2>/<h3> of many generated manuals (texinfo,
asciidoc: 3 of the 4 HTML guides of the evaluation set lost all of them), so each heading goes in as
a marked paragraph, which it keeps where it keeps the text around it, and comes out as a heading.
The title follows the rule uploaded HTML follows (corpus.ingest.parse.htmltext.page_title): the page's
og:title or <title>, else the main text's first <h1>, else the URL's last part. The charset
is the one the Content-Type header names ("text/html; charset=iso-8859-1", or charset=...), else
the page's <meta charset>, else UTF-8 or Windows-1252, as for uploaded HTML
(corpus.ingest.parse.htmltext.html_source). Raises ParseError, with a message a person can read,
for a page that is empty, has no main text, or cannot be read; markup bombs are refused before
parsing (the same check as uploads).
"""

from __future__ import annotations

import re
from copy import deepcopy
from dataclasses import dataclass

import lxml.html
import trafilatura
from lxml import etree
from trafilatura.settings import DEFAULT_CONFIG

from corpus.ingest.parse.base import ParseError
from corpus.ingest.parse.htmltext import head_title, html_source, page_title
from sources.web.fetch import split_content_type

_SPACES = re.compile(r"\s+")
# Under MIN_EXTRACTED_SIZE characters of main text (250 by default) trafilatura falls back to the whole
# page's text, navigation included and headings, lists and code blocks flattened: a short docs page
# ("Install: run pip install ...") is a page too, so its main text is kept as found.
_CONFIG = deepcopy(DEFAULT_CONFIG)
_CONFIG.set("DEFAULT", "MIN_EXTRACTED_SIZE", "1")
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# A word no page contains: "<h3>Setup</h3>" goes in as "<p>ragwebheading3ragwebheading Setup</p>".
_MARK = "ragwebheading"
_MARKED = re.compile(rf"^[ \t>*_-]*{_MARK}([1-6]){_MARK}[ \t]*(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Page:
    title: str
    markdown: str


def _text(element) -> str:
    return _SPACES.sub(" ", element.text_content()).strip().rstrip("¶ ")  # Sphinx's and MkDocs' permalinks


def _mark_headings(root) -> None:
    """Turns each heading into a paragraph holding a mark, its level and its text (in place)."""
    for heading in list(root.iter(*_HEADING_TAGS)):
        text = _text(heading)
        for child in list(heading):
            heading.remove(child)
        heading.attrib.clear()
        level = heading.tag[1]
        heading.tag = "p"
        heading.text = f"{_MARK}{level}{_MARK} {text}" if text else ""


def _unmark_headings(markdown: str) -> str:
    markdown = _MARKED.sub(lambda m: "#" * int(m.group(1)) + " " + m.group(2).strip(), markdown)
    return markdown.replace(_MARK, "")  # a mark trafilatura moved inside a line: never shown


def page_document(body: bytes, url: str, content_type: str, *, charset: str | None = None) -> Page:
    """The page's title and main text as Markdown; ParseError when there is none to read.

    content_type may carry the charset ("text/html; charset=utf-8"); `charset` (Fetched.charset)
    wins over it when given.
    """
    if not body.strip():
        raise ParseError(f"The page {url} is empty.")
    html = html_source(body, charset=charset or split_content_type(content_type)[1], what=f"The page {url}")
    if not html.strip():
        raise ParseError(f"The page {url} is empty.")
    try:
        root = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError) as exc:
        raise ParseError(f"The page {url} could not be read ({exc}).") from None
    head = head_title(root)
    _mark_headings(root)
    try:
        markdown = trafilatura.extract(
            root, url=url, output_format="markdown", include_formatting=True, include_links=False,
            include_tables=True, include_comments=False, include_images=False, config=_CONFIG) or ""
    except (ValueError, TypeError) as exc:
        raise ParseError(f"The page {url} could not be read ({exc}).") from None
    markdown = _unmark_headings(markdown)
    if not markdown.strip():
        raise ParseError(f"The page {url} has no main text to index (only navigation, or nothing readable).")
    # The main text's first <h1> (not a site name in a page header that trafilatura dropped).
    h1 = next((line[2:].strip() for line in markdown.splitlines() if line.startswith("# ")), "")
    return Page(title=page_title(head, h1, url), markdown=markdown.strip() + "\n")
