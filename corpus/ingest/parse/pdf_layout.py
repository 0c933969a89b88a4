"""What a PDF's page layout leaves in its text layer, undone: running headers, footers and page
numbers dropped, and headings set apart from the paragraph they stand above. Pure.

A PDF's text has no paragraphs: every line ends in one newline, and a heading line is followed
straight by its paragraph's first line, so a reader of the text runs them together ("2.4 Library
Notes The header file of this library is ..."). A manual repeats its title, chapter and version
at the top or bottom of every page, with the page number: quoted in an answer, they are noise.

- Running lines: a line among the first or last EDGE_LINES lines of a page whose text, with
  digits ignored (page numbers, dates), appears there on at least RUNNING_SHARE of the pages
  (and on MIN_RUNNING_PAGES of them), or on MIN_NUMBERED_PAGES pages with their page numbers
  (a chapter's header), is dropped, from the edge inwards.
- Headings: a short line (at most HEADING_WIDTH of the document's usual line length) that ends
  in no punctuation, stands where a paragraph can start (first on its page, or after a line that
  ends a sentence or a line shorter than the usual length) and is followed by a line starting
  with a capital, digit or bullet, gets a blank line before and after it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

EDGE_LINES = 3
RUNNING_SHARE = 0.4  # books alternate left- and right-hand headers: each is on half the pages
MIN_RUNNING_PAGES = 3
MIN_NUMBERED_PAGES = 2  # a running line that carries the page number: a short chapter's header
FULL_WIDTH = 0.8  # of the usual line length: a line this long was wrapped, its paragraph goes on
HEADING_WIDTH = 0.6
HEADING_WORDS = 12

_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(r"(\d+)$|^(\d+)\b")  # a page number ends or starts its line
_SPACE = re.compile(r"\s+")
_ENDS_SENTENCE = re.compile(r"[.!?:;][\"')\]’”]*$")
_ENDS_PUNCTUATED = re.compile(r"[.!?:;,][\"')\]’”]*$")
_OPENING = "\"'(‘“"
_BULLETS = "•-–—*+"


@dataclass(frozen=True)
class Cleaned:
    pages: list[str]  # each page's text, running lines dropped and headings set apart
    running_lines: int  # lines dropped
    headings: int  # lines set apart as headings


def clean_pages(page_texts: list[str]) -> Cleaned:
    """The pages' texts (newlines already \\n) with running lines dropped and headings set apart.
    Running lines stay when they are all the text there is: a PDF whose every page holds the same
    one line is that line, not a header over nothing (the hostile PDF of 2,000 such pages ended
    "no extractable text")."""
    pages = [[line.rstrip() for line in text.strip().split("\n")] for text in page_texts]
    running = _running_keys(pages)
    dropped = 0
    kept_pages: list[list[str]] = []
    for lines in pages:
        kept = _without_running(lines, running)
        dropped += _filled(lines) - _filled(kept)
        kept_pages.append(kept)
    if dropped and not any(_filled(kept) for kept in kept_pages):
        kept_pages, dropped = pages, 0
    width = _usual_width(kept_pages)
    set_apart = 0
    texts = []
    for lines in kept_pages:
        text, count = _headings_apart(lines, width)
        set_apart += count
        texts.append(text)
    return Cleaned(texts, dropped, set_apart)


def _filled(lines: list[str]) -> int:
    return sum(1 for line in lines if line.strip())


def _key(line: str) -> str:
    return _DIGITS.sub("0", _SPACE.sub(" ", line.strip())).lower()


def _edges(lines: list[str]) -> tuple[list[str], list[str]]:
    """The lines a running header, and a running footer, may be among (on a short page, the same)."""
    return lines[:EDGE_LINES], lines[-EDGE_LINES:]


def _running_keys(pages: list[list[str]]) -> tuple[set[str], set[str]]:
    """The keys of the lines repeated at the top, and at the bottom, of the pages: on most of
    them, or on a few carrying the page number (a chapter's running header)."""
    with_text = [(index, [line for line in lines if line.strip()]) for index, lines in enumerate(pages)]
    with_text = [(index, lines) for index, lines in with_text if lines]
    needed = max(MIN_RUNNING_PAGES, RUNNING_SHARE * len(with_text))
    found = []
    for edge in (0, 1):
        numbered: dict[str, Counter[int]] = {}
        counts: Counter[str] = Counter()
        for index, lines in with_text:
            for line in set(_edges(lines)[edge]):
                key = _key(line)
                counts[key] += 1
                number = _PAGE_NUMBER.search(line.strip())
                if number:
                    # The page number grows with the page index: their difference stays the same.
                    page = int(number.group(1) or number.group(2))
                    numbered.setdefault(key, Counter())[page - index] += 1
        found.append({key for key, count in counts.items()
                      if count >= needed or max(numbered.get(key, {0: 0}).values()) >= MIN_NUMBERED_PAGES})
    return found[0], found[1]


def _without_running(lines: list[str], running: tuple[set[str], set[str]]) -> list[str]:
    """The page's lines without the running ones at its edges (blank lines inside are kept)."""
    top, bottom = running
    filled = [i for i, line in enumerate(lines) if line.strip()]
    start = 0
    while start < min(EDGE_LINES, len(filled)) and _key(lines[filled[start]]) in top:
        start += 1
    end = len(filled)
    while end > max(start, len(filled) - EDGE_LINES) and _key(lines[filled[end - 1]]) in bottom:
        end -= 1
    if start >= end:
        return []
    return lines[filled[start]:filled[end - 1] + 1]


def _usual_width(pages: list[list[str]]) -> int:
    """The length of a full line of running text: the 90th percentile of line lengths."""
    lengths = sorted(len(line.strip()) for lines in pages for line in lines if line.strip())
    return lengths[int(0.9 * (len(lengths) - 1))] if lengths else 0


def _headings_apart(lines: list[str], width: int) -> tuple[str, int]:
    out: list[str] = []
    count = 0
    for index, line in enumerate(lines):
        if _is_heading(lines, index, width):
            if out and out[-1]:
                out.append("")
            out += [line, ""]
            count += 1
        else:
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out), count


def _is_heading(lines: list[str], index: int, width: int) -> bool:
    line = lines[index].strip()
    if (not line or index + 1 >= len(lines) or len(line) > HEADING_WIDTH * width or _is_item(line)
            or not any(c.isalpha() for c in line) or len(line.split()) > HEADING_WORDS
            or _ENDS_PUNCTUATED.search(line)):
        return False
    if not _starts_paragraph(lines[index + 1].strip()):
        return False
    if index == 0:
        return True
    previous = lines[index - 1].strip()
    return bool(_ENDS_SENTENCE.search(previous)) or len(previous) < FULL_WIDTH * width


def _is_item(line: str) -> bool:
    """A bulleted list item ("• one", "- two"; "-v" and "--verbose" are options, not items)."""
    return line[0] in _BULLETS and (line[0] != "-" or line[1:2].isspace())


def _starts_paragraph(line: str) -> bool:
    """The line starts as a paragraph, list item or heading does: a capital (or an uncased
    letter), a digit or a bullet, not a lower-case continuation."""
    first = line.lstrip(_OPENING)[:1]
    return bool(first) and (first in _BULLETS or first.isdigit() or (first.isalpha() and not first.islower()))
