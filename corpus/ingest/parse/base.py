"""What every parser returns, and the one error they raise."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePosixPath
from urllib.parse import urlsplit

# Changes whenever parsing gives other text for the same file (2: compatibility characters folded,
# PDF running headers and footers dropped, PDF headings set apart): it is part of the collection's
# pipeline signature, so documents built before are rebuilt when re-ingested.
# A change that alters the text of only a few, recognisable documents marks just those out of date
# with a migration instead (corpus 0019: the long-`#`-line rule of reads_as_heading), since a bump
# here makes every document of every format out of date and the next sync rebuilds them all.
TEXT_VERSION = 3  # 3: scanned pages and images read by OCR, PDF tables kept as Markdown tables

# Called with (pages done, pages in all) as a long parse (OCR) goes on.
Progress = Callable[[int, int], None]


class ParseError(Exception):
    """A document that cannot be read; str(exc) is a message for the person who uploaded it."""


@dataclass(frozen=True)
class Heading:
    start: int  # character offset in ParsedDocument.text where the heading (its line) begins
    level: int  # 1 = top level; a DOCX "Title" paragraph is level 0
    title: str


# A heading is a title, not prose: a marked line longer than this, or holding several sentences, is text
# (a file that arrives as one long "# ..." line would otherwise be all heading, with nothing to quote).
MAX_HEADING_CHARS = 200
_SENTENCE_BREAK = re.compile(r"[.!?][\"')\]’”]*\s+(?=[\"'(“‘]?[A-Z0-9])")


def reads_as_heading(title: str) -> bool:
    """Whether the words of a line marked as a heading (Markdown `#`) read as one: at most
    MAX_HEADING_CHARS characters and not several sentences (two or more sentence breaks)."""
    return len(title) <= MAX_HEADING_CHARS and len(_SENTENCE_BREAK.findall(title)) < 2


def title_heading(headings: Sequence[Heading]) -> str | None:
    """The heading that titles a document, one rule for every format with headings: its first
    level-0 heading (a Word "Title"), else its first level-1 heading; None without either."""
    return next((h.title for h in headings if h.level == 0), None) or \
        next((h.title for h in headings if h.level == 1), None)


def name_title(name: str) -> str:
    """The title a document's name gives when the document states none: the last part of the name
    the person gave it (an upload's name, a path, a URL) without its extension ("guides/setup.txt"
    gives "setup", "https://example.org/zebras/index.html" "index"), a bare URL its host; "" for
    an empty name."""
    if "://" in name:
        parts = urlsplit(name)
        last = PurePosixPath(parts.path).name if parts.path.strip("/") else ""
        return PurePosixPath(last).stem if last else parts.hostname or ""
    last = PurePosixPath(name.replace("\\", "/")).name
    return PurePosixPath(last).stem or last


@dataclass
class ParsedDocument:
    text: str
    title: str
    media_type: str
    headings: list[Heading] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)  # offsets where each PDF page starts; [] when not paged
    # The file's own properties where its format states them (corpus.ingest.parse.properties).
    author: str = ""
    created: datetime | None = None
    modified: datetime | None = None


def normalise_newlines(text: str) -> str:
    """\\r\\n and lone \\r become \\n, so offsets mean the same thing for every format."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def page_number(pages: list[int], offset: int) -> int | None:
    """1-based page holding the character at `offset`, given the offsets where pages start
    (ParsedDocument.pages); None for a document without pages."""
    if not pages:
        return None
    page = 1
    for number, start in enumerate(pages, start=1):
        if start > offset:
            break
        page = number
    return page
