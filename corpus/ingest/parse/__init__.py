"""Parsing uploaded files into text with headings (and PDF page offsets).

parse_document() is the one entry point; every failure is a ParseError whose message can be shown
to the person who uploaded the file as it is. Newlines in the text are always \\n, and
compatibility characters (ligatures, full-width forms, non-breaking spaces) are folded to plain
ones (corpus.ingest.parse.fold). The formats read, their extensions and their names for people:
formats.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath

from django.conf import settings

from corpus.ingest.parse.base import Heading, ParsedDocument, ParseError, Progress, name_title, title_heading
from corpus.ingest.parse.delimited import parse_csv
from corpus.ingest.parse.detect import detect_media_type, normalise_media_type
from corpus.ingest.parse.epub import parse_epub
from corpus.ingest.parse.fold import fold_document
from corpus.ingest.parse.formats import (
    CSV,
    DOCX,
    EML,
    EPUB,
    HTML,
    IMAGES,
    MARKDOWN,
    ODT,
    PDF,
    PPTX,
    RST,
    SUPPORTED,
    SUPPORTED_NAMES,
    TEXT,
    XLSX,
    ZIP,
    ZIPPED,
)
from corpus.ingest.parse.htmltext import parse_html
from corpus.ingest.parse.images import parse_image
from corpus.ingest.parse.layout import layout_headings, layout_title
from corpus.ingest.parse.limits import check_text_length, size_text
from corpus.ingest.parse.mail import parse_eml
from corpus.ingest.parse.markdown_inline import inline_references
from corpus.ingest.parse.markup import markdown_headings, rst_headings
from corpus.ingest.parse.odt import parse_odt
from corpus.ingest.parse.pdf import parse_pdf
from corpus.ingest.parse.properties import read_properties
from corpus.ingest.parse.slides import parse_pptx
from corpus.ingest.parse.text import decode_text, rejoin_hyphenated
from corpus.ingest.parse.word import parse_docx
from corpus.ingest.parse.xlsx import parse_xlsx

__all__ = ["Heading", "ParseError", "ParsedDocument", "detect_media_type", "parse_document", "SUPPORTED"]

# The structured formats: each parser gives (text, headings, title or None).
_STRUCTURED: dict[str, Callable[[bytes], tuple[str, list[Heading], str | None]]] = {
    DOCX: parse_docx, XLSX: parse_xlsx, PPTX: parse_pptx, ODT: parse_odt, EPUB: parse_epub, EML: parse_eml,
}


def parse_document(data: bytes, *, filename: str, name: str | None = None, media_type: str | None = None,
                   max_bytes: int | None = None, on_progress: Progress | None = None) -> ParsedDocument:
    """Parse a file's bytes. `filename` tells the type by its extension (a stored file's name will
    do); `media_type` (e.g. from an upload) is used when it is a supported type and the bytes do not
    say otherwise (a PDF, an image or a ZIP-based format is recognised by its content); `max_bytes`
    defaults to settings.MAX_UPLOAD_BYTES.

    The title, one rule for every format: the title the file states (its properties, front matter,
    <title>), else the heading that titles it (base.title_heading; in plain text, whose headings are
    found by layout, only one that opens the text: layout.layout_title), else `name`, the name the
    person gave the file (an upload's name, a path, a URL; default `filename`), without its extension
    (base.name_title), never a storage name. The author and dates come from the file's own properties
    when its format states them (corpus.ingest.parse.properties).

    Raises ParseError for empty, binary, undecodable, damaged, text-less, over-limit or unsupported
    files. Scanned PDF pages and images are read by OCR (corpus.ingest.parse.ocr), `on_progress`
    told of each page read."""
    limit = max_bytes if max_bytes is not None else _default_limit()
    if len(data) > limit:
        raise ParseError(f"The file is {size_text(len(data))}, over the {size_text(limit)} limit.")
    if not data:
        raise ParseError("The file is empty.")
    detected = detect_media_type(filename, data)
    declared = normalise_media_type(media_type)
    if detected in (PDF, ZIP) or detected in ZIPPED or detected in IMAGES or declared not in SUPPORTED:
        kind = detected
    elif declared == TEXT and detected == RST:
        kind = RST  # clients call any .txt file text/plain
    else:
        kind = declared
    # Folded here, once for every format, before anything takes offsets into the text.
    document = fold_document(_parse(data, kind, filename, on_progress))
    check_text_length(len(document.text))
    if not document.text.strip():
        raise ParseError("The file contains no text.")
    if not document.title:
        document.title = name_title(name or filename) or "Untitled"
    properties = read_properties(data, document.media_type)
    document.author, document.created, document.modified = properties.author, properties.created, properties.modified
    return document


def _parse(data: bytes, kind: str, filename: str, on_progress: Progress | None) -> ParsedDocument:
    if kind in (TEXT, MARKDOWN, RST):
        text = decode_text(data)
        if kind == MARKDOWN:
            text = inline_references(text)
            headings, title = markdown_headings(text)
            return ParsedDocument(text, title or title_heading(headings) or "", kind, headings)
        if kind == RST:
            headings = rst_headings(text)
            return ParsedDocument(text, title_heading(headings) or "", kind, headings)
        # Plain text is often a manual page as `man` rendered it: its hyphenated words whole again.
        text = rejoin_hyphenated(text)
        headings = layout_headings(text)
        return ParsedDocument(text, layout_title(text, headings), kind, headings)
    if kind == HTML:
        text, headings, title = parse_html(data)
        if not text.strip():
            raise ParseError("The HTML page has no visible text.")
        return ParsedDocument(text, title or "", kind, headings)
    if kind == PDF:
        text, pages, title = parse_pdf(data, on_progress)
        return ParsedDocument(text, title or "", kind, [], pages)
    if kind in IMAGES:
        text, pages = parse_image(data, on_progress)
        return ParsedDocument(text, "", kind, [], pages)
    if kind == CSV:
        return ParsedDocument(parse_csv(data), "", kind)
    if kind in _STRUCTURED:
        text, headings, title = _STRUCTURED[kind](data)
        return ParsedDocument(text, title or "", kind, headings)
    if kind == ZIP:
        raise ParseError("The file is a ZIP archive, not a document we read (a Word, Excel, PowerPoint, "
                         f"OpenDocument or EPUB file is one too). Upload {SUPPORTED_NAMES} files one by one.")
    extension = PurePath(filename).suffix.lower()
    described = f"({extension}) " if extension else ""
    raise ParseError(f"This file type {described}is not supported: upload {SUPPORTED_NAMES} files.")


def _default_limit() -> int:
    return settings.MAX_UPLOAD_BYTES
