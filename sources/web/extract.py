"""The main text of a web page, as Markdown: what a web source stores as its document.

`page_document(body, url, content_type)` returns a Page (title, markdown). The main text comes from
trafilatura, which drops navigation, headers, footers, sidebars and cookie banners far better than
rules of our own would; headings stay Markdown headings (#, ##, ...), tables stay tables, a link
keeps its text (not its address). The charset is the one the Content-Type header names
("text/html; charset=iso-8859-1", or charset=...), else the page's <meta charset>, else UTF-8 or
Windows-1252 (corpus.ingest.parse.text.decode_text). Raises ParseError, with a message a person can
read, for a page that is empty, has no main text, or cannot be read; markup bombs are refused
before parsing (corpus.ingest.parse.limits.check_markup).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import trafilatura

from corpus.ingest.parse.base import ParseError
from corpus.ingest.parse.limits import check_markup
from corpus.ingest.parse.text import decode_text

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Page:
    title: str
    markdown: str


def _charset(content_type: str, body: bytes) -> str | None:
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'")
    declared = _META_CHARSET.search(body[:4096])
    return declared.group(1).decode("ascii") if declared else None


def _front_matter(output: str) -> tuple[str, str]:
    """(title, text) of trafilatura's output: a "---" block of "key: value" lines, then the text."""
    lines = output.split("\n")
    if lines and lines[0].strip() == "---" and "---" in (line.strip() for line in lines[1:]):
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        fields = dict(line.partition(": ")[::2] for line in lines[1:end])
        return _SPACES.sub(" ", fields.get("title", "")).strip(), "\n".join(lines[end + 1:])
    return "", output


def page_document(body: bytes, url: str, content_type: str, *, charset: str | None = None) -> Page:
    """The page's title and main text as Markdown; ParseError when there is none to read.

    content_type may carry the charset ("text/html; charset=utf-8"); `charset` (Fetched.charset)
    wins over it when given.
    """
    if not body.strip():
        raise ParseError(f"The page {url} is empty.")
    check_markup(body, f"The page {url}")
    html = decode_text(body, declared=charset or _charset(content_type, body))
    html = _XML_DECLARATION.sub("", html, count=1)  # lxml refuses decoded text that declares an encoding
    try:
        # One pass: with metadata, trafilatura puts the title in a front-matter block above the text.
        output = trafilatura.extract(
            html, url=url, output_format="markdown", with_metadata=True, include_formatting=True,
            include_links=False, include_tables=True, include_comments=False, include_images=False) or ""
    except (ValueError, TypeError) as exc:
        raise ParseError(f"The page {url} could not be read ({exc}).") from None
    title, markdown = _front_matter(output)
    if not markdown.strip():
        raise ParseError(f"The page {url} has no main text to index (only navigation, or nothing readable).")
    if not title:
        first = next((line for line in markdown.splitlines() if line.startswith("#")), "")
        title = first.lstrip("#").strip() or url
    return Page(title=title, markdown=markdown.strip() + "\n")
