"""Scanned PDF pages: rendered by pypdfium2 (PDFium) and read by OCR (corpus.ingest.parse.ocr).

Each page is rendered in grey at OCR_DPI, or at the lower resolution that keeps it within
OCR_MAX_PIXELS (a poster-sized page does not become a gigapixel bitmap), one page at a time: the
bitmap is dropped before the next page is rendered. A PDF with more than OCR_MAX_PAGES scanned
pages is refused before any is read, rather than indexed in part.
"""

from __future__ import annotations

import math

from django.conf import settings

from corpus.ingest.parse import ocr
from corpus.ingest.parse.base import ParseError, Progress

DISABLED_MESSAGE = ("The PDF's pages are scanned images without a text layer, and OCR is turned off on this "
                    "server (OCR_ENABLED=0); upload a PDF with a text layer.")
RENDER_MESSAGE = "A scanned page of the PDF could not be rendered for OCR (the file may be damaged)."


def ocr_pages(data: bytes, indexes: list[int], on_progress: Progress | None = None) -> dict[int, str]:
    """The OCR text of the pages at `indexes` (0-based) of the PDF `data`, by index."""
    import pypdfium2

    if not settings.OCR_ENABLED:
        raise ParseError(DISABLED_MESSAGE)
    if len(indexes) > ocr.OCR_MAX_PAGES:
        raise ParseError(f"The PDF has {len(indexes):,} scanned pages without a text layer; OCR reads at most "
                         f"{ocr.OCR_MAX_PAGES:,} pages of one document: split it into smaller files.")
    texts: dict[int, str] = {}
    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as exc:
        raise ParseError(RENDER_MESSAGE) from exc
    try:
        for done, index in enumerate(indexes, start=1):
            texts[index] = ocr.page_text(_render(document[index]))
            if on_progress:
                on_progress(done, len(indexes))
    finally:
        document.close()
    return texts


def render_scale(width_points: float, height_points: float) -> float:
    """The rendering scale (1 = 72 dpi) of a page: OCR_DPI, lowered to stay within OCR_MAX_PIXELS."""
    scale = ocr.OCR_DPI / 72
    pixels = width_points * height_points * scale * scale
    if pixels > ocr.OCR_MAX_PIXELS:
        scale *= math.sqrt(ocr.OCR_MAX_PIXELS / pixels)
    return scale


def _render(page):
    import pypdfium2

    try:
        width, height = page.get_size()
        bitmap = page.render(scale=render_scale(width, height), grayscale=True)
        image = bitmap.to_pil()
    except pypdfium2.PdfiumError as exc:
        raise ParseError(RENDER_MESSAGE) from exc
    finally:
        page.close()
    return image
