"""Images (PNG, JPEG, TIFF, multi-page TIFF included): their text by OCR, one page per frame.

The header is read first: an image claiming more than OCR_MAX_IMAGE_PIXELS pixels (a
decompression bomb, or a poster-sized scan) is refused before any pixel is decoded; a JPEG is
decoded straight at a reduced size when that is enough (Pillow's draft mode); every page is then
bounded by corpus.ingest.parse.ocr (OCR_MAX_PIXELS, OCR_PAGE_SECONDS), and a file holds at most
OCR_MAX_PAGES pages.
"""

from __future__ import annotations

import io

from django.conf import settings

from corpus.ingest.parse import ocr
from corpus.ingest.parse.base import ParseError, Progress
from corpus.ingest.parse.pages import joined_pages

DAMAGED_MESSAGE = "The image file is damaged or incomplete and could not be read."
NO_TEXT_MESSAGE = "No text was found in the image (OCR read nothing)."
DISABLED_MESSAGE = "Images are read by OCR, which is turned off on this server (OCR_ENABLED=0)."


def parse_image(data: bytes, on_progress: Progress | None = None) -> tuple[str, list[int]]:
    """(text, the offset where each page starts). Raises ParseError for a damaged, over-limit or
    text-less image."""
    from PIL import Image

    if not settings.OCR_ENABLED:
        raise ParseError(DISABLED_MESSAGE)
    try:
        image = Image.open(io.BytesIO(data))
        frames = getattr(image, "n_frames", 1)
    except Image.DecompressionBombError as exc:  # Pillow's own, larger bound, checked on opening
        raise ParseError(_pixels_message("", ocr.OCR_MAX_IMAGE_PIXELS)) from exc
    except Exception as exc:  # noqa: BLE001 - Pillow signals a damaged file with many exception types
        raise ParseError(DAMAGED_MESSAGE) from exc
    if frames > ocr.OCR_MAX_PAGES:
        raise ParseError(f"The image has {frames:,} pages; OCR reads at most {ocr.OCR_MAX_PAGES:,} pages of "
                         "one file: split it into smaller files.")
    texts = []
    for index in range(frames):
        try:
            image.seek(index)
            check_pixels(image.width, image.height)
            page = _decoded(image)
        except ParseError:
            raise
        except Exception as exc:  # noqa: BLE001 - as above (a torn TIFF raises KeyError or TypeError)
            raise ParseError(DAMAGED_MESSAGE) from exc
        texts.append(ocr.page_text(page))
        if on_progress:
            on_progress(index + 1, frames)
    if not any(text.strip() for text in texts):
        raise ParseError(NO_TEXT_MESSAGE)
    return joined_pages(texts)


def check_pixels(width: int, height: int) -> None:
    """Refuse an image larger than OCR_MAX_IMAGE_PIXELS before it is decoded."""
    limit = ocr.OCR_MAX_IMAGE_PIXELS
    if width * height > limit:
        raise ParseError(_pixels_message(f" {width:,} × {height:,} pixels,", limit))


def _pixels_message(size: str, limit: int) -> str:
    return (f"The image is{size} over the limit of {limit:,} pixels (a decompression bomb, or a scan at too high "
            "a resolution); it was not read.")


def _decoded(image):
    """The current frame decoded, a JPEG at the smallest scale still over OCR_MAX_PIXELS."""
    if image.format == "JPEG":
        limit = ocr.OCR_MAX_PIXELS
        scale = (limit / (image.width * image.height)) ** 0.5
        if scale < 1:
            image.draft("RGB", (int(image.width * scale) + 1, int(image.height * scale) + 1))
    image.load()
    return image.copy()
