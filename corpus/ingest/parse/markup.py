"""Markdown and reStructuredText: the source text is kept as it is (bar Markdown reference links,
written inline: markdown_inline); only headings are found, a Markdown heading titled by its words
without inline markup ("`asObject` (Boolean)" is titled "asObject (Boolean)").

Keeping the source (rather than rendering it) keeps code, tables and lists readable in chunks
and citations, and lets offsets point at exactly what the author wrote.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from corpus.ingest.parse.base import Heading, reads_as_heading
from corpus.ingest.parse.markdown_inline import plain

# --- Markdown (CommonMark's heading rules, simplified) ---

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
# Lines that cannot be part of a paragraph turned into a setext heading.
_NOT_PARAGRAPH = re.compile(r" {4}| {0,3}(?:[-*+][ \t]|\d{1,9}[.)][ \t]|>|\||<)")
_FRONT_MATTER_TITLE = re.compile(r"(?m)^title:[ \t]*(.+?)[ \t]*$")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, line) for each line, without its newline."""
    offset = 0
    for line in text.split("\n"):
        yield offset, line
        offset += len(line) + 1


def markdown_headings(text: str) -> tuple[list[Heading], str | None]:
    """ATX (`# Title`) and setext (underlined) headings outside fenced code blocks, and the
    title from YAML front matter, if any. A `#` line that does not read as a heading (too long,
    several sentences: base.reads_as_heading) is a paragraph line."""
    headings: list[Heading] = []
    front_title = None
    body_start = 0
    if text.startswith("---\n"):
        end = re.search(r"(?m)^(?:---|\.\.\.)[ \t]*$", text[4:])
        if end:
            match = _FRONT_MATTER_TITLE.search(text, 4, 4 + end.start())
            front_title = match.group(1).strip("\"'") if match else None
            body_start = 4 + end.end()
    fence: str | None = None
    paragraph: list[tuple[int, str]] = []
    for offset, line in _lines(text):
        if offset < body_start:
            continue
        fence_match = _FENCE.fullmatch(line)
        if fence is not None:
            # A closing fence: the same character, at least as long, nothing after it.
            if fence_match and fence_match.group(1)[0] == fence[0] and len(fence_match.group(1)) >= len(fence) \
                    and not fence_match.group(2).strip():
                fence = None
            continue
        if fence_match and not (fence_match.group(1)[0] == "`" and "`" in fence_match.group(2)):
            fence = fence_match.group(1)
            paragraph = []
            continue
        atx = _ATX.fullmatch(line)
        if atx and reads_as_heading((atx.group(2) or "").strip()):
            headings.append(Heading(offset, len(atx.group(1)), _title(atx.group(2) or "")))
            paragraph = []
            continue
        setext = _SETEXT.fullmatch(line)
        if setext and paragraph:
            title = _title(" ".join(part.strip() for _, part in paragraph))
            headings.append(Heading(paragraph[0][0], 1 if setext.group(1)[0] == "=" else 2, title))
            paragraph = []
            continue
        if not line.strip():
            paragraph = []
        elif paragraph or not _NOT_PARAGRAPH.match(line):
            paragraph.append((offset, line))
    return headings, front_title


def _title(words: str) -> str:
    """A Markdown heading's words as its title: without inline markup, unless nothing is left then."""
    words = words.strip()
    return plain(words) or words


# --- reStructuredText ---

# A line of one repeated punctuation character (docutils accepts any non-alphanumeric printable).
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1*[ \t]*")


def rst_headings(text: str) -> list[Heading]:
    """Section titles marked by an underline, or an overline and underline, of one punctuation
    character. As in docutils, each distinct style (character, with or without overline) gets the
    next level the first time it appears. A heading starts at its overline or title line, or at
    the `.. _label:` targets right above it."""
    lines = text.split("\n")
    offsets = []
    offset = 0
    for line in lines:
        offsets.append(offset)
        offset += len(line) + 1
    styles: list[tuple[str, bool]] = []
    headings: list[Heading] = []
    i = 0
    while i < len(lines) - 1:
        line = lines[i]
        after_blank = i == 0 or not lines[i - 1].strip()
        found = None
        over = _ADORNMENT.fullmatch(line)
        if over and after_blank and i + 2 < len(lines):
            title, under = lines[i + 1], _ADORNMENT.fullmatch(lines[i + 2])
            if (title.strip() and under and under.group(1) == over.group(1)
                    and len(lines[i + 2].rstrip()) == len(line.rstrip())
                    and (len(line.rstrip()) >= len(title.strip()) or len(line.rstrip()) >= 4)
                    and not _ADORNMENT.fullmatch(title)):
                found = ((over.group(1), True), title.strip(), 3)
        if found is None and after_blank and line.strip() and not line[0].isspace() and not over:
            under = _ADORNMENT.fullmatch(lines[i + 1])
            length = len(lines[i + 1].rstrip())
            if under and (length >= len(line.rstrip()) or length >= 4):
                found = ((under.group(1), False), line.strip(), 2)
        if found is None:
            i += 1
            continue
        style, title, consumed = found
        if style not in styles:
            styles.append(style)
        headings.append(Heading(offsets[_label_start(lines, i)], styles.index(style) + 1, title))
        i += consumed
    return headings


_TARGET = re.compile(r"\.\. _\S.*:[ \t]*")


def _label_start(lines: list[str], i: int) -> int:
    """The line where the section titled at line i begins: explicit targets (`.. _name:`) right
    above a title name that section (docutils moves their ids onto it), so they belong to it."""
    start = i
    j = i - 1
    while j >= 0:
        if not lines[j].strip():
            j -= 1
            continue
        if not _TARGET.fullmatch(lines[j]):
            break
        start = j
        j -= 1
    return start


# Markup only reST writes: a directive (".. note::"), a hyperlink target (".. _label: URL"), a role
# (":doc:`...`") or a paragraph announcing a literal block ("as follows::").
_RST_MARKUP = re.compile(r"(?m)^[ \t]*\.\. (?:[\w:-]+::|_\S)|:[\w:.-]+:`\S|::[ \t]*$")


def looks_like_rst(text: str) -> bool:
    """A plain .txt file written in reST (like Django's docs, every one of its 249 files) has adorned
    section titles and markup only reST writes (directives, targets, roles, `::`). Underlined titles
    alone are plain text's too (Debian's READMEs: none of the 115 with such titles on a test machine
    had reST markup), read with its other headings by corpus.ingest.parse.layout."""
    sample = text[:200_000]
    return bool(_RST_MARKUP.search(sample)) and bool(rst_headings(sample))
