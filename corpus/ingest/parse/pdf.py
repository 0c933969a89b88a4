"""PDF: the text layer of each page (no OCR), with the offset where each page starts."""

from __future__ import annotations

import io
import logging

from corpus.ingest.parse.base import ParseError, normalise_newlines

NO_TEXT_MESSAGE = ("The PDF has no extractable text (is it a scanned image?). "
                   "Run OCR on it, or upload a PDF with a text layer.")
DAMAGED_MESSAGE = "The PDF file is damaged or incomplete and could not be read."
ENCRYPTED_MESSAGE = "The PDF is password-protected or encrypted; upload an unprotected copy."

PAGE_SEPARATOR = "\n\n"


def parse_pdf(data: bytes) -> tuple[str, list[int], str | None]:
    """(text, page start offsets, metadata title or None)."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    # pypdf reports recoverable damage through logging; the outcome is what matters here.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                # Many PDFs are "encrypted" only to restrict printing, with an empty user password.
                opened = reader.decrypt("")
            except (DependencyError, NotImplementedError):
                opened = 0
            if not opened:
                raise ParseError(ENCRYPTED_MESSAGE)
        page_texts = [page.extract_text() or "" for page in reader.pages]
        metadata_title = reader.metadata.title if reader.metadata else None
    except ParseError:
        raise
    except Exception as exc:  # noqa: BLE001 - pypdf signals damage with many exception types
        raise ParseError(DAMAGED_MESSAGE) from exc
    if not page_texts:
        raise ParseError(DAMAGED_MESSAGE)
    parts: list[str] = []
    pages: list[int] = []
    length = 0
    for page_text in page_texts:
        # NUL cannot be stored in Postgres text; it is never meaningful in extracted text.
        page_text = normalise_newlines(page_text).replace("\x00", "").strip()
        if page_text and length:
            parts.append(PAGE_SEPARATOR)
            length += len(PAGE_SEPARATOR)
        pages.append(length)
        parts.append(page_text)
        length += len(page_text)
    text = "".join(parts)
    if not text.strip():
        raise ParseError(NO_TEXT_MESSAGE)
    title = metadata_title.strip() if isinstance(metadata_title, str) and metadata_title.strip() else None
    return text, pages, title
