"""The file formats ragweb reads: the one table every way in follows.

The parser registry (parse_document), the upload rule (corpus.uploads: the web form's and the
admin's `accept` attribute, the API's help and error messages, `manage.py ingest`'s folder walk)
all derive what they accept, and how they name it, from FORMATS.
"""

from __future__ import annotations

from dataclasses import dataclass

TEXT = "text/plain"
MARKDOWN = "text/markdown"
RST = "text/x-rst"
HTML = "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CSV = "text/csv"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
ODT = "application/vnd.oasis.opendocument.text"
EPUB = "application/epub+zip"
EML = "message/rfc822"
PNG = "image/png"
JPEG = "image/jpeg"
TIFF = "image/tiff"
ZIP = "application/zip"
UNKNOWN = "application/octet-stream"


@dataclass(frozen=True)
class Format:
    name: str  # for people, in messages: "Excel (.xlsx)"
    media_type: str
    extensions: tuple[str, ...]


FORMATS = (
    Format("plain text", TEXT, (".txt", ".text")),
    Format("Markdown", MARKDOWN, (".md", ".markdown", ".mdown", ".mkd")),
    Format("reStructuredText", RST, (".rst", ".rest")),
    Format("HTML", HTML, (".html", ".htm", ".xhtml")),
    Format("PDF", PDF, (".pdf",)),
    Format("Word (.docx)", DOCX, (".docx",)),
    Format("Excel (.xlsx)", XLSX, (".xlsx",)),
    Format("CSV", CSV, (".csv", ".tsv")),
    Format("PowerPoint (.pptx)", PPTX, (".pptx",)),
    Format("OpenDocument text (.odt)", ODT, (".odt",)),
    Format("EPUB", EPUB, (".epub",)),
    Format("email (.eml)", EML, (".eml",)),
    Format("PNG", PNG, (".png",)),
    Format("JPEG", JPEG, (".jpg", ".jpeg")),
    Format("TIFF", TIFF, (".tif", ".tiff")),
)

EXTENSIONS = {extension: f.media_type for f in FORMATS for extension in f.extensions}
SUPPORTED = frozenset(f.media_type for f in FORMATS)
SUPPORTED_EXTENSIONS = frozenset(EXTENSIONS)
# ZIP containers, told apart by what they hold rather than by their name.
ZIPPED = frozenset({DOCX, XLSX, PPTX, ODT, EPUB})
# Read by OCR (corpus.ingest.parse.images).
IMAGES = frozenset({PNG, JPEG, TIFF})
# Other names clients send for the same types.
ALIASES = {
    "text/x-markdown": MARKDOWN, "text/rst": RST, "text/prs.fallenstein.rst": RST,
    "application/xhtml+xml": HTML, "application/x-pdf": PDF,
    "image/jpg": JPEG, "image/pjpeg": JPEG, "image/tif": TIFF,
    "text/tab-separated-values": CSV, "application/csv": CSV, "text/comma-separated-values": CSV,
}


def _listed(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " or " + names[-1]


# "plain text, Markdown, ..., JPEG or TIFF": what the "not supported" messages offer.
SUPPORTED_NAMES = _listed([f.name for f in FORMATS])
