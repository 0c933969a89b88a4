"""Headings of plain text, found by layout alone: nothing marks them but where they stand.

Two layouts are read, conservatively (a paragraph taken for a heading would cut a chunk mid-thought
and put its words in every following chunk's header; a heading missed costs only its section path):

- a title underlined (or over- and underlined) by a line of `=`, `-` or `~` (or `#`, `*`, `^`, `+`),
  at least half its length;
- a title standing alone: a short line between blank lines, followed by a paragraph, as Postfix's
  READMEs and many hand-written guides set their section titles. It must read as a title: at most
  MAX_TITLE_CHARS characters and MAX_TITLE_WORDS words, starting with a capital or a digit, not
  indented (code, quotes), not a list item, no URL or address, and not ending like a sentence or
  a line that introduces something (`.`, `,`, `;`, `:`, `!`): "Examples (specify only one of the
  following):" introduces its example, "Regards," signs a letter. A question is a title (a FAQ's).
  A paragraph or a list follows: flush left unless a list, two lines or more or one sentence
  (an indented block, a URL or a command after a short line is what the line introduces). The line
  that opens the text may also stand above another heading instead of a paragraph (the document's
  title above its first section).

Levels follow the first appearance of each underline style, as in reStructuredText: the first
underline character seen is level 1, the next one level 2, and so on (over- and underlined is a
style of its own); titles standing alone come below them all, an underline setting a title further
apart than a bare line does (in a text without underlines they are level 1).
"""

from __future__ import annotations

import re

from corpus.ingest.parse.base import Heading, reads_as_heading

MAX_TITLE_CHARS = 80
MAX_TITLE_WORDS = 12

# A line of one repeated character: an underline, or a rule between parts when it stands alone.
_RULE = re.compile(r"[ \t]*([-=~_*#+])\1{2,}[ \t]*")
_UNDERLINE = re.compile(r"([-=~#*^+])\1+[ \t]*")
_LIST_ITEM = re.compile(r"(?:[-*+•·o]|\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.)])[ \t]")
_BULLET = re.compile(r"[-*+•·][ \t]")
# A section number such as "2.1 Relaying" is a title, not a numbered list item.
_SECTION_NUMBER = re.compile(r"\d{1,3}(?:\.\d{1,3})+\.?[ \t]")
# Code, markup, addresses and quotes: a URL, an e-mail address, braces, pipes, backticks, a tag, an
# assignment, a comment or prompt or quote mark first, columns apart (a row of a table set in spaces).
_NOT_TITLE = re.compile(r"://|@|[{}|`]|<[a-zA-Z/!]|^\w+\s*=|^(?:--|#|//|>|\$ )|\S[ \t]{3,}\S")
_CLOSING = (".", ",", ";", ":", "!")
# A line ending in one of these words runs on into what follows ("The homepage of this package is
# at", above an indented URL): a sentence cut short, not a title. Prepositions stay out: "What
# domains to receive mail for" is a title.
_RUNS_ON = frozenset("a an the is are was were be been has have and or but nor that which whose of at on by "
                     "such as than if when where because".split())
_SIGNATURE = re.compile(r"--[ \t]*")
_ALONE = ("", False)  # the style of a title standing alone


def _lines(text: str) -> tuple[list[str], list[int]]:
    lines = text.split("\n")
    offsets, offset = [], 0
    for line in lines:
        offsets.append(offset)
        offset += len(line) + 1
    return lines, offsets


def _blank(lines: list[str], i: int) -> bool:
    return i < 0 or i >= len(lines) or not lines[i].strip()


def reads_as_title(line: str) -> bool:
    """Whether a line standing alone reads as a title (the module's rules), not as a sentence,
    a list item, code or an address."""
    if not line or line[0].isspace():
        return False
    title = line.strip()
    words = title.split()
    if len(title) > MAX_TITLE_CHARS or len(words) > MAX_TITLE_WORDS or words[-1].lower() in _RUNS_ON \
            or title.rstrip(")]\"'’”").endswith(_CLOSING):
        return False
    if (_LIST_ITEM.match(title) and not _SECTION_NUMBER.match(title)) or _NOT_TITLE.search(title):
        return False
    first = next((c for c in title if c.isalnum()), "")
    return (first.isupper() or first.isdigit()) and not _RULE.fullmatch(title) and reads_as_heading(title)


def _underlined(lines: list[str], i: int) -> tuple[tuple[str, bool], int] | None:
    """((character, overlined), lines taken) when line i is a title underlined, or over- and
    underlined, by a line that fits it (_titled); None otherwise."""
    line = lines[i]
    over = _UNDERLINE.fullmatch(line)
    if over and _blank(lines, i - 1) and i + 2 < len(lines):
        under = _UNDERLINE.fullmatch(lines[i + 2])
        title = lines[i + 1].strip()
        if under and under.group(1) == over.group(1) and _titled(title, lines[i + 2], over=True):
            return (over.group(1), True), 3
    if i + 1 < len(lines) and _blank(lines, i - 1) and not line[:1].isspace():
        under = _UNDERLINE.fullmatch(lines[i + 1])
        if under and _titled(line.strip(), lines[i + 1], over=False):
            return (under.group(1), False), 2
    return None


def _titled(title: str, underline: str, *, over: bool) -> bool:
    """An underline under words that read as a heading, not as a bullet item or a rule: at least half
    as long as the title (a title centred between two lines may stand out of them), and at least
    three characters unless it covers the title ("jq" over "=="). Longer is fine: a line drawn
    right under one line of words underlines it, however far it runs."""
    length = len(underline.rstrip())
    fits = 2 * length >= len(title) and (length >= 3 or length >= len(title))
    return (fits and 0 < len(title) <= MAX_TITLE_CHARS and reads_as_heading(title)
            and not _UNDERLINE.fullmatch(title) and not _BULLET.match(title))


def layout_headings(text: str) -> list[Heading]:
    """The headings of a plain text, by the module's rules, each at its (over)line's offset."""
    lines, offsets = _lines(text)
    styles: list[tuple[str, bool]] = []
    found: list[tuple[int, tuple[str, bool], str]] = []  # (line, style, title)
    alone: list[int] = []  # lines of titles standing alone, decided once the blocks after them are known
    i = 0
    while i < len(lines):
        underlined = _underlined(lines, i)
        if underlined is not None:
            style, taken = underlined
            found.append((i, style, lines[i + 1 if style[1] else i].strip()))
            i += taken
            continue
        if _blank(lines, i - 1) and _blank(lines, i + 1) and reads_as_title(lines[i]):
            alone.append(i)
        i += 1
    heading_lines = {line for line, _, _ in found}
    first_text = next((n for n, line in enumerate(lines) if line.strip()), None)
    for n in reversed(alone):
        after = _next_block(lines, n + 1)
        if after is None:
            continue
        # Another heading right after it: only the text's first line may stand above one (as its title).
        if (n == first_text) if after in heading_lines else _is_body(lines, after):
            found.append((n, _ALONE, lines[n].strip()))
            heading_lines.add(n)
    found.sort()
    for _, style, _ in found:
        if style not in styles and style != _ALONE:
            styles.append(style)
    styles.append(_ALONE)
    return [Heading(offsets[n], styles.index(style) + 1, " ".join(title.split())) for n, style, title in found]


def _next_block(lines: list[str], i: int) -> int | None:
    """The first line of the next block after line i: past blank lines and rules standing alone."""
    while i < len(lines):
        if lines[i].strip() and not (_RULE.fullmatch(lines[i]) and _blank(lines, i - 1) and _blank(lines, i + 1)):
            return i
        i += 1
    return None


def _is_body(lines: list[str], i: int) -> bool:
    """Whether the block starting at line i is a paragraph or a list under a heading: flush left
    unless a list (an indented block after a short line is code or a quote it introduces), not
    another title standing alone, not a signature."""
    if (lines[i][:1].isspace() and not _LIST_ITEM.match(lines[i].lstrip())) or _SIGNATURE.fullmatch(lines[i]):
        return False
    if not _blank(lines, i + 1):
        return True
    # One line: a sentence, not a title nor a bare URL, path or command.
    line = lines[i].strip()
    return not reads_as_title(line) and (len(line.split()) >= 4 or line.endswith((".", "!", "?", ":")))


def layout_title(text: str, headings: list[Heading]) -> str:
    """The title of a plain text: its first heading when that is the text's first line, a title set
    apart, whatever its level; else "" (a heading found by layout further down names a section, not
    the document, where base.title_heading would take the first level-1 one)."""
    opening = len(text) - len(text.lstrip())
    return headings[0].title if headings and headings[0].start <= opening else ""
