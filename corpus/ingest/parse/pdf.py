"""PDF: the text layer of each page, with the offset where each page starts; running headers,
footers and page numbers dropped and headings set apart (corpus.ingest.parse.pdf_layout); text
drawn twice at one place (fake bold, shadows) read once (corpus.ingest.parse.pdf_overdrawn).

A page without a text layer that holds an image (a scan) is rendered (pypdfium2) and read by OCR
(corpus.ingest.parse.pdf_scans); pages with a text layer are never OCR'd, so a mixed PDF costs
OCR only for its scanned pages.

Memory stays bounded: every stream inflates to at most MAX_DECOMPRESSED_BYTES (pypdf's own
limits, lowered to ours), the decoded content of a page is dropped once its text is out (pypdf
would keep every page's), and text stops at the document text limit.
"""

from __future__ import annotations

import io
import logging

from corpus.ingest.parse.base import ParseError, Progress, normalise_newlines
from corpus.ingest.parse.limits import (
    check_text_length,
    decompressed_error,
    max_decompressed_bytes,
    max_text_chars,
    text_error,
)
from corpus.ingest.parse.pages import joined_pages
from corpus.ingest.parse.pdf_layout import clean_pages
from corpus.ingest.parse.pdf_overdrawn import drawn_once, overdrawn
from corpus.ingest.parse.pdf_scans import ocr_pages
from corpus.ingest.parse.pdf_tables import draws_rules, tables_text

logger = logging.getLogger(__name__)

NO_TEXT_MESSAGE = ("The PDF has no extractable text: its pages hold no text layer, and no scanned image "
                   "in which OCR found text.")
DAMAGED_MESSAGE = "The PDF file is damaged or incomplete and could not be read."
ENCRYPTED_MESSAGE = "The PDF is password-protected or encrypted; upload an unprotected copy."



def parse_pdf(data: bytes, on_progress: Progress | None = None) -> tuple[str, list[int], str | None]:
    """(text, page start offsets, metadata title or None). `on_progress` is told of the scanned
    pages read by OCR, as they are read."""
    from pypdf import apply_configuration

    # pypdf reports recoverable damage through logging; the outcome is what matters here.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    with apply_configuration(**_stream_limits()):
        page_texts, scanned, ruled, metadata_title = _read_pages(data)
    if not page_texts:
        raise ParseError(DAMAGED_MESSAGE)
    tables = tables_text(data, ruled)
    twice = [index for index, text in enumerate(page_texts) if index not in tables and overdrawn(text)]
    for index, text in (tables | drawn_once(data, twice)).items():
        page_texts[index] = text
    if scanned:
        for index, text in ocr_pages(data, scanned, on_progress).items():
            page_texts[index] = text
        check_text_length(sum(map(len, page_texts)))
    # NUL cannot be stored in Postgres text; it is never meaningful in extracted text.
    cleaned = clean_pages([normalise_newlines(text).replace("\x00", "") for text in page_texts])
    logger.info("PDF text: %s running header/footer lines dropped, %s headings set apart",
                cleaned.running_lines, cleaned.headings)
    text, pages = joined_pages(cleaned.pages)
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


def _read_pages(data: bytes) -> tuple[list[str], list[int], list[int], object]:
    """(each page's text layer, the indexes of the pages without one that hold an image, the
    indexes of the pages with one that draw ruling lines (tables, maybe), the metadata title)."""
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
        scanned: list[int] = []
        ruled: list[int] = []
        length = 0
        for index, page in enumerate(reader.pages):
            page_text = page.extract_text() or ""
            if not page_text.strip() and has_image(page):
                scanned.append(index)
            elif page_text.strip() and draws_rules(_content(page)):
                ruled.append(index)
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
    return page_texts, scanned, ruled, metadata_title


def has_image(page, depth: int = 0) -> bool:
    """Whether the page (or a form it draws, two levels deep) uses an image XObject: a scan."""
    resources = page.get("/Resources")
    resources = resources.get_object() if resources is not None else None
    xobjects = resources.get("/XObject") if resources is not None else None
    if xobjects is None:
        return False
    for ref in xobjects.get_object().values():
        xobject = ref.get_object()
        subtype = xobject.get("/Subtype")
        if subtype == "/Image" or (subtype == "/Form" and depth < 2 and has_image(xobject, depth + 1)):
            return True
    return False


def _content(page) -> bytes:
    """The page's content streams, decoded (extract_text has just decoded them: pypdf caches them)."""
    contents = page.get("/Contents")
    if contents is None:
        return b""
    contents = contents.get_object()
    streams = list(contents) if isinstance(contents, list) else [contents]
    return b"\n".join(stream.get_object().get_data() for stream in streams)


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
