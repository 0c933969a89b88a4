"""What every parser returns, and the one error they raise."""

from __future__ import annotations

from dataclasses import dataclass, field


class ParseError(Exception):
    """A document that cannot be read; str(exc) is a message for the person who uploaded it."""


@dataclass(frozen=True)
class Heading:
    start: int  # character offset in ParsedDocument.text where the heading (its line) begins
    level: int  # 1 = top level; a DOCX "Title" paragraph is level 0
    title: str


@dataclass
class ParsedDocument:
    text: str
    title: str
    media_type: str
    headings: list[Heading] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)  # offsets where each PDF page starts; [] when not paged


def normalise_newlines(text: str) -> str:
    """\\r\\n and lone \\r become \\n, so offsets mean the same thing for every format."""
    return text.replace("\r\n", "\n").replace("\r", "\n")
