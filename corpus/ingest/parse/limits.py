"""Bounds on what parsing one document may cost, whatever its file size says.

A 3 MB .docx can inflate to gigabytes (a zip bomb), an HTML or Word file can hold millions of empty
elements (each a node in lxml's tree), and a PDF's compressed streams can hold far more text than
the file's size suggests. Each parser checks these bounds while it reads and stops with a
ParseError a person can act on, before memory runs away. The numbers come from settings
(MAX_DECOMPRESSED_BYTES, MAX_MARKUP_ELEMENTS, MAX_DOCUMENT_CHARS).
"""

from __future__ import annotations

from django.conf import settings

from corpus.ingest.parse.base import ParseError


def size_text(n: int) -> str:
    """1536 -> '1.5 KB'; 52428800 -> '50 MB'."""
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB".replace(".0 MB", " MB")
    if n >= 1024:
        return f"{n / 1024:.1f} KB".replace(".0 KB", " KB")
    return f"{n} bytes"


def max_decompressed_bytes() -> int:
    return settings.MAX_DECOMPRESSED_BYTES


def max_markup_elements() -> int:
    return settings.MAX_MARKUP_ELEMENTS


def max_text_chars() -> int:
    return settings.MAX_DOCUMENT_CHARS


def decompressed_error(what: str) -> ParseError:
    return ParseError(f"{what} unpacks to more than {size_text(max_decompressed_bytes())}, over the limit "
                      "(a compressed 'zip bomb', or a document too large to index); it was not read.")


def markup_error(what: str) -> ParseError:
    return ParseError(f"{what} has more than {max_markup_elements():,} markup elements, over the limit; "
                      "split it into smaller files.")


def text_error() -> ParseError:
    return ParseError(f"The document's text is longer than {max_text_chars():,} characters, over the limit; "
                      "split it into smaller files.")


def check_text_length(length: int) -> None:
    """Raise the over-limit ParseError if `length` characters of text are too many."""
    if length > max_text_chars():
        raise text_error()


def check_markup(data: bytes, what: str) -> None:
    """Refuse markup with more elements than lxml may build (counted as '<', a cheap upper bound)."""
    if data.count(b"<") > max_markup_elements():
        raise markup_error(what)


def max_spreadsheet_cells() -> int:
    return settings.MAX_SPREADSHEET_CELLS


def cells_error(what: str) -> ParseError:
    return ParseError(f"{what} has more than {max_spreadsheet_cells():,} cells, over the limit; "
                      "split it into smaller files.")
