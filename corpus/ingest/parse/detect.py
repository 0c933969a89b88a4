"""Which kind of document a file is: magic bytes first (they cannot lie), then the extension."""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from pathlib import PurePath

from corpus.ingest.parse.archive import MAX_ENTRIES, entry_count
from corpus.ingest.parse.base import ParseError
from corpus.ingest.parse.formats import (
    ALIASES,
    CSV,
    DOCX,
    EML,
    EPUB,
    EXTENSIONS,
    HTML,
    JPEG,
    MARKDOWN,
    ODT,
    PDF,
    PNG,
    PPTX,
    RST,
    SUPPORTED,
    TEXT,
    TIFF,
    UNKNOWN,
    XLSX,
    ZIP,
    ZIPPED,
)
from corpus.ingest.parse.markup import looks_like_rst
from corpus.ingest.parse.text import decode_text

# The media types, re-exported for the parsers and their tests.
__all__ = ["CSV", "DOCX", "EML", "EPUB", "HTML", "JPEG", "MARKDOWN", "ODT", "PDF", "PNG", "PPTX", "RST", "SUPPORTED",
           "TEXT", "TIFF", "UNKNOWN", "XLSX", "ZIP", "detect_media_type", "normalise_media_type"]

# A ZIP container is this format when it holds this part (OpenDocument and EPUB say so in "mimetype").
_ZIP_MARKERS = (("word/document.xml", DOCX), ("xl/workbook.xml", XLSX), ("ppt/presentation.xml", PPTX))
_ZIP_MIMETYPES = {ODT.encode(): ODT, EPUB.encode(): EPUB}
# Images say what they are in their first bytes.
_IMAGE_MAGIC = ((b"\x89PNG\r\n\x1a\n", PNG), (b"\xff\xd8\xff", JPEG), (b"II*\x00", TIFF), (b"MM\x00*", TIFF))
_HTML_START = re.compile(rb"\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)[\s>]", re.IGNORECASE | re.DOTALL)


def normalise_media_type(media_type: str | None) -> str | None:
    """'Text/Markdown; charset=utf-8' -> 'text/markdown'; None for empty input."""
    if not media_type:
        return None
    base = media_type.split(";", 1)[0].strip().lower()
    return ALIASES.get(base, base) or None


def detect_media_type(filename: str, data: bytes) -> str:
    """The media type of a file. PDF, PNG, JPEG, TIFF and the ZIP-based formats (DOCX, XLSX, PPTX, ODT, EPUB) are
    recognised by their content whatever the name; a ZIP archive that is none of them is
    "application/zip" (unless its name says one of them, so that parser can say the file is
    damaged); a .txt file written in reStructuredText is "text/x-rst"; an unknown extension is
    plain text if the bytes decode as text."""
    extension = PurePath(filename).suffix.lower()
    head = data[:1024]
    # Readers accept junk before the header, but a text file may mention "%PDF-" too.
    if head.lstrip().startswith(b"%PDF-") or (extension == ".pdf" and b"%PDF-" in head):
        return PDF
    for magic, kind in _IMAGE_MAGIC:
        if data.startswith(magic):
            return kind
    by_extension = EXTENSIONS.get(extension)
    if data.startswith(b"PK\x03\x04"):
        return _zip_kind(data) or (by_extension if by_extension in ZIPPED else ZIP)
    if by_extension == TEXT:
        return RST if _decodes_as_rst(data) else TEXT
    if by_extension:
        return by_extension
    if _HTML_START.match(head.lstrip(b"\xef\xbb\xbf")):
        return HTML
    return TEXT if _decodes(data) else UNKNOWN


def _zip_kind(data: bytes) -> str | None:
    """The format of a ZIP container by the parts it holds, or None."""
    count = entry_count(data)
    if count is not None and count > MAX_ENTRIES:
        return None  # zipfile would build an object per entry; no document has so many
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            for part, kind in _ZIP_MARKERS:
                if part in names:
                    return kind
            if "mimetype" in names:
                with archive.open("mimetype") as member:
                    return _ZIP_MIMETYPES.get(member.read(100).strip())
    except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, OSError, ValueError, EOFError):
        return None
    return None


def _decodes(data: bytes) -> bool:
    try:
        decode_text(data[:65536])
    except ParseError:
        # The sample may end inside a multi-byte character; judge the whole file then.
        if len(data) <= 65536:
            return False
        try:
            decode_text(data)
        except ParseError:
            return False
    return True


def _decodes_as_rst(data: bytes) -> bool:
    try:
        return looks_like_rst(decode_text(data))
    except ParseError:
        return False
