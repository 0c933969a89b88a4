"""Building a document's text block by block, with its headings, within the text limit."""

from __future__ import annotations

from collections.abc import Sequence

from corpus.ingest.parse.base import Heading, normalise_newlines, title_heading
from corpus.ingest.parse.limits import max_text_chars, text_error

_SEPARATOR = "\n\n"


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
