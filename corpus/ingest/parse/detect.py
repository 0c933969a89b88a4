"""Which kind of document a file is: magic bytes first (they cannot lie), then the extension."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import PurePath

from corpus.ingest.parse.archive import MAX_ENTRIES, entry_count
from corpus.ingest.parse.base import ParseError
from corpus.ingest.parse.markup import looks_like_rst
from corpus.ingest.parse.text import decode_text

TEXT = "text/plain"
MARKDOWN = "text/markdown"
RST = "text/x-rst"
HTML = "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
ZIP = "application/zip"
UNKNOWN = "application/octet-stream"

SUPPORTED = frozenset({TEXT, MARKDOWN, RST, HTML, PDF, DOCX})

_EXTENSIONS = {
    ".txt": TEXT, ".text": TEXT,
    ".md": MARKDOWN, ".markdown": MARKDOWN, ".mdown": MARKDOWN, ".mkd": MARKDOWN,
    ".rst": RST, ".rest": RST,
    ".html": HTML, ".htm": HTML, ".xhtml": HTML,
    ".pdf": PDF,
    ".docx": DOCX,
}
# Other names clients send for the same types.
_ALIASES = {
    "text/x-markdown": MARKDOWN, "text/rst": RST, "text/prs.fallenstein.rst": RST,
    "application/xhtml+xml": HTML, "application/x-pdf": PDF,
}
_HTML_START = re.compile(rb"\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)[\s>]", re.IGNORECASE | re.DOTALL)


def normalise_media_type(media_type: str | None) -> str | None:
    """'Text/Markdown; charset=utf-8' -> 'text/markdown'; None for empty input."""
    if not media_type:
        return None
    base = media_type.split(";", 1)[0].strip().lower()
    return _ALIASES.get(base, base) or None


def detect_media_type(filename: str, data: bytes) -> str:
    """The media type of a file. PDF and DOCX are recognised by their magic bytes whatever the
    name; a ZIP archive without word/document.xml is "application/zip" (unless named .docx, so
    the parser can say the Word file is damaged); a .txt file written in reStructuredText is
    "text/x-rst"; an unknown extension is plain text if the bytes decode as text."""
    extension = PurePath(filename).suffix.lower()
    head = data[:1024]
    # Readers accept junk before the header, but a text file may mention "%PDF-" too.
    if head.lstrip().startswith(b"%PDF-") or (extension == ".pdf" and b"%PDF-" in head):
        return PDF
    if data.startswith(b"PK\x03\x04"):
        if _is_docx(data) or extension == ".docx":
            return DOCX
        return ZIP
    by_extension = _EXTENSIONS.get(extension)
    if by_extension == TEXT:
        return RST if _decodes_as_rst(data) else TEXT
    if by_extension:
        return by_extension
    if _HTML_START.match(head.lstrip(b"\xef\xbb\xbf")):
        return HTML
    return TEXT if _decodes(data) else UNKNOWN


def _is_docx(data: bytes) -> bool:
    count = entry_count(data)
    if count is not None and count > MAX_ENTRIES:
        return False  # zipfile would build an object per entry; no Word file has so many
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return "word/document.xml" in archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


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
