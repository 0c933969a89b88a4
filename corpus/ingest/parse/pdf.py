"""PDF: the text layer of each page (no OCR), with the offset where each page starts; running
headers, footers and page numbers dropped and headings set apart (corpus.ingest.parse.pdf_layout).

Memory stays bounded: every stream inflates to at most MAX_DECOMPRESSED_BYTES (pypdf's own
limits, lowered to ours), the decoded content of a page is dropped once its text is out (pypdf
would keep every page's), and text stops at the document text limit.
"""

from __future__ import annotations

import io
import logging

from corpus.ingest.parse.base import ParseError, normalise_newlines
from corpus.ingest.parse.limits import decompressed_error, max_decompressed_bytes, max_text_chars, text_error
from corpus.ingest.parse.pdf_layout import clean_pages

logger = logging.getLogger(__name__)

NO_TEXT_MESSAGE = ("The PDF has no extractable text (is it a scanned image?). "
                   "Run OCR on it, or upload a PDF with a text layer.")
DAMAGED_MESSAGE = "The PDF file is damaged or incomplete and could not be read."
ENCRYPTED_MESSAGE = "The PDF is password-protected or encrypted; upload an unprotected copy."

PAGE_SEPARATOR = "\n\n"


def parse_pdf(data: bytes) -> tuple[str, list[int], str | None]:
    """(text, page start offsets, metadata title or None)."""
    from pypdf import apply_configuration

    # pypdf reports recoverable damage through logging; the outcome is what matters here.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    with apply_configuration(**_stream_limits()):
        page_texts, metadata_title = _read_pages(data)
    if not page_texts:
        raise ParseError(DAMAGED_MESSAGE)
    # NUL cannot be stored in Postgres text; it is never meaningful in extracted text.
    cleaned = clean_pages([normalise_newlines(text).replace("\x00", "") for text in page_texts])
    logger.info("PDF text: %s running header/footer lines dropped, %s headings set apart",
                cleaned.running_lines, cleaned.headings)
    parts: list[str] = []
    pages: list[int] = []
    length = 0
    for page_text in cleaned.pages:
        page_text = page_text.strip()
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


def _stream_limits() -> dict[str, int]:
    """pypdf's per-stream output limits, none above MAX_DECOMPRESSED_BYTES."""
    from pypdf import get_configuration

    configuration = get_configuration()
    limit = max_decompressed_bytes()
    names = ("maximum_declared_stream_length", "array_based_stream_maximum_output_length",
             "jbig2_maximum_output_length", "lzw_maximum_output_length", "run_length_maximum_output_length",
             "zlib_maximum_output_length", "brotli_maximum_output_length", "image_maximum_buffer_size")
    return {name: min(getattr(configuration, name), limit) for name in names if hasattr(configuration, name)}


def _read_pages(data: bytes) -> tuple[list[str], object]:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, LimitReachedError

    limit = max_text_chars()
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
        page_texts: list[str] = []
        length = 0
        for page in reader.pages:
            page_text = page.extract_text() or ""
            _forget_decoded_contents(page)
            length += len(page_text)
            if length > limit:
                raise text_error()
            page_texts.append(page_text)
        metadata_title = reader.metadata.title if reader.metadata else None
    except ParseError:
        raise
    except LimitReachedError as exc:
        raise decompressed_error("The PDF") from exc
    except Exception as exc:  # noqa: BLE001 - pypdf signals damage with many exception types
        raise ParseError(DAMAGED_MESSAGE) from exc
    return page_texts, metadata_title


def _forget_decoded_contents(page) -> None:
    """Drop the decoded content streams pypdf caches on the page's stream objects."""
    contents = page.get("/Contents")
    if contents is None:
        return
    contents = contents.get_object()
    streams = list(contents) if isinstance(contents, list) else [contents]
    for stream in streams:
        stream = stream.get_object()
        if getattr(stream, "decoded_self", None) is not None:
            stream.decoded_self = None
