"""Building a document's text block by block, with its headings, within the text limit."""

from __future__ import annotations

import re
from collections.abc import Sequence

from corpus.ingest.parse.base import Heading, normalise_newlines, title_heading
from corpus.ingest.parse.limits import max_text_chars, text_error

_SEPARATOR = "\n\n"
# Paragraph styles that hold code, by the names word processors show: pandoc's "Source Code", Word's
# "HTML Preformatted", LibreOffice's "Preformatted Text" (parse.word, parse.odt).
CODE_STYLES = frozenset({"Source Code", "HTML Preformatted", "Preformatted Text", "Code", "Macro Text"})


class Sections:
    """Blocks joined by a blank line; a heading block is recorded as a Heading at its offset.

    Every parser of a structured format (Word, spreadsheets, slides, OpenDocument, EPUB, email)
    writes through this, so blocks are separated, NULs dropped and the text bounded the same way:
    add() raises the text-limit ParseError as soon as the text grows past MAX_DOCUMENT_CHARS.
    """

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.headings: list[Heading] = []
        self._limit = max_text_chars()

    def add(self, text: str, *, level: int | None = None, marker: str = "", tight: bool = False) -> bool:
        """Append a block (stripped; nothing if empty). With `level` it is a heading, titled by its
        text on one line. A list item's `marker` (its indentation and "- " or "2. ") goes before
        the text, and as many spaces before each further line of it; `tight` joins the block to the
        one before with a line break instead of a blank line (the items of one list). Returns whether
        anything was added."""
        text = normalise_newlines(text).replace("\x00", "").strip()
        if not text:
            return False
        if marker:
            text = marker + text.replace("\n", "\n" + " " * len(marker))
        start = self._append(text, separator="\n" if tight else _SEPARATOR)
        if level is not None:
            self.headings.append(Heading(start, level, " ".join(text.split())))
        return True

    def add_code(self, lines: Sequence[str]) -> bool:
        """Append `lines` of code (paragraphs in a code style, in a run) as one Markdown fenced block,
        as Markdown writes code, so that chunking keeps it whole and answers never quote it as
        sentences; the fence is longer than any run of backticks inside. Returns whether anything
        was added."""
        code = normalise_newlines("\n".join(lines)).replace("\x00", "").strip("\n")
        if not code.strip():
            return False
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", code)), default=0))
        self._append(f"{fence}\n{code}\n{fence}")
        return True

    def extend(self, text: str, headings: Sequence[Heading]) -> bool:
        """Append text parsed elsewhere (an HTML chapter or body, already free of NULs: the text
        decoder refuses them) with its headings, moved to where the text lands. Returns whether
        anything was added."""
        stripped = text.lstrip()
        lead = len(text) - len(stripped)
        stripped = stripped.rstrip()
        if not stripped:
            return False
        start = self._append(stripped)
        self.headings.extend(Heading(start + h.start - lead, h.level, h.title) for h in headings
                             if lead <= h.start < lead + len(stripped))
        return True

    def text(self) -> str:
        return "".join(self.parts)

    def title(self) -> str | None:
        """The first level-0 heading (a Word "Title"), else the first level-1 one, else None."""
        return title_heading(self.headings)

    def _append(self, text: str, separator: str = _SEPARATOR) -> int:
        if self.length:
            self.parts.append(separator)
            self.length += len(separator)
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        if self.length > self._limit:
            raise text_error()
        return start
