"""Bounds on what parsing one document may cost, whatever its file size says.

A 3 MB .docx can inflate to gigabytes (a zip bomb), an HTML or Word file can hold millions of empty
elements (each a node in lxml's tree), and a PDF's compressed streams can hold far more text than
the file's size suggests. Each parser checks these bounds while it reads and stops with a
ParseError a person can act on, before memory runs away. The numbers are the constants below: they
guard the worker's memory against hostile files, and the largest upload an operator accepts is the
operator's setting (MAX_UPLOAD_BYTES), not these.
"""

from __future__ import annotations

from corpus.ingest.parse.base import ParseError

# Bytes a compressed part (a .docx's parts together, one PDF stream) may inflate to: twice the largest
# default upload, so an honest 50 MB document unpacks, while a zip bomb stops block by block before it
# takes memory (`make reliability`'s bombs peaked the worker under 1.2 GB).
MAX_DECOMPRESSED_BYTES = 100 * 1024 * 1024
# Elements in a DOCX/XLSX/PPTX/ODT/EPUB part or an HTML page: each costs ~110 bytes in lxml's tree,
# so ~330 MB at most; the largest real manual in the fidelity suite has well under 100,000.
MAX_MARKUP_ELEMENTS = 3_000_000
# Cells of one workbook or CSV file, empty ones inside the used range included (a sheet claiming the
# whole A1:XFD1048576 grid fails fast); openpyxl reads ~50,000 cells/s here, so ~10 s.
MAX_SPREADSHEET_CELLS = 500_000
# Characters of extracted text per document (~2,500 pages of prose; ~12,000 chunks of 800 characters).
MAX_DOCUMENT_CHARS = 10_000_000


def size_text(n: int) -> str:
    """1536 -> '1.5 KB'; 52428800 -> '50 MB'."""
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB".replace(".0 MB", " MB")
    if n >= 1024:
        return f"{n / 1024:.1f} KB".replace(".0 KB", " KB")
    return f"{n} bytes"


def max_decompressed_bytes() -> int:
    return MAX_DECOMPRESSED_BYTES


def max_markup_elements() -> int:
    return MAX_MARKUP_ELEMENTS


def max_text_chars() -> int:
    return MAX_DOCUMENT_CHARS


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
    return MAX_SPREADSHEET_CELLS


def cells_error(what: str) -> ParseError:
    return ParseError(f"{what} has more than {max_spreadsheet_cells():,} cells, over the limit; "
                      "split it into smaller files.")
