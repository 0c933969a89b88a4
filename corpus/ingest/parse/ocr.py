"""OCR: the text of one page image, bounded in pixels and in time.

The engine is RapidOCR (PP-OCR detection, orientation and recognition models run by onnxruntime);
its models ship inside the `rapidocr` wheel, so nothing is downloaded at run time. It is loaded
once per process, on the first page, and used by one page at a time (a lock).

Bounds (the constants below): an image over OCR_MAX_PIXELS is scaled down to it before the engine sees
it; a page still being read after OCR_PAGE_SECONDS is stopped inside onnxruntime (a RunOptions
terminate flag set by a timer, checked by every model call) and fails with a ParseError.

Words the recognition ran together ("dependingon") are split again (corpus.ingest.parse.words).
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass

from corpus.ingest.parse.base import ParseError
from corpus.ingest.parse.words import split_joined_words

logger = logging.getLogger(__name__)

DETECTION_MIN_SIDE = 320

# What OCR may cost per document. Constants, not settings: each bounds memory or time against hostile or
# oversized scans, and none is a choice about the deployment (docs/evaluation.md, "OCR of scans": ~6 s of CPU
# a page on the 2-core machine, 3-4 s quiet). OCR_ENABLED (settings) is the operator's one OCR choice.
# Pages of a scanned PDF are rendered at this resolution: 200 dpi read the scanned test pages at 0.05% CER.
OCR_DPI = 200
# A page or image larger than this is scaled down first (A4 at 200 dpi is ~3.9 million pixels).
OCR_MAX_PIXELS = 6_000_000
# An image claiming more pixels is refused before it is decoded: a decompression bomb.
OCR_MAX_IMAGE_PIXELS = 80_000_000
# A page still being read after this long stops the document (~20x a page's measured CPU time).
OCR_PAGE_SECONDS = 120.0
# A document with more scanned pages (or image frames) is refused before any is read (~10 min of CPU).
OCR_MAX_PAGES = 200

_lock = threading.Lock()
_engine = None
_deadline = None


class _Deadline:
    """The current page's RunOptions; `expired` once its time is up."""

    def __init__(self) -> None:
        import onnxruntime

        self.options = onnxruntime.RunOptions()
        self.expired = False

    def expire(self) -> None:
        self.expired = True
        self.options.terminate = True  # the running model call stops at its next operator


class _TimedSession:
    """An onnxruntime InferenceSession whose run() obeys the current page's deadline."""

    def __init__(self, session) -> None:
        self._session = session

    def run(self, output_names, input_feed, run_options=None):
        if _deadline is None:
            return self._session.run(output_names, input_feed, run_options)
        if _deadline.expired:
            raise TimeoutError("OCR page time limit")
        return self._session.run(output_names, input_feed, _deadline.options)

    def __getattr__(self, name):
        return getattr(self._session, name)


def _load():
    """The engine, with each model's session wrapped by _TimedSession (rapidocr 3.10's layout:
    engine.text_det/text_cls/text_rec, each holding .session, an OrtInferSession holding .session)."""
    global _engine
    if _engine is None:
        from rapidocr import RapidOCR

        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        # Detection scales an image's shorter side up to at least this many pixels: rapidocr's 736
        # made a 900 × 200 snippet a 3300 × 736 input (4× the work); pages are larger anyway.
        engine = RapidOCR(params={"Global.log_level": "warning", "Det.limit_side_len": DETECTION_MIN_SIDE})
        for model in (engine._load_det_model(), engine._load_cls_model(), engine._load_rec_model()):
            model.session.session = _TimedSession(model.session.session)
        _engine = engine
    return _engine


def scaled_to_bound(image):
    """`image` (PIL) scaled down, keeping its proportions, to at most OCR_MAX_PIXELS pixels."""
    limit = OCR_MAX_PIXELS
    pixels = image.width * image.height
    if pixels <= limit:
        return image
    factor = math.sqrt(limit / pixels)
    size = (max(1, int(image.width * factor)), max(1, int(image.height * factor)))
    return image.resize(size)


@dataclass(frozen=True)
class TextBox:
    top: float
    bottom: float
    left: float
    text: str


def page_text(image) -> str:
    """The text of a page image (PIL), lines top to bottom, a blank line where a gap taller than a
    line separates paragraphs; "" for a page without text. Raises ParseError when the page takes
    longer than OCR_PAGE_SECONDS."""
    import numpy as np

    global _deadline
    image = scaled_to_bound(image).convert("RGB")
    pixels = np.asarray(image)
    with _lock:
        engine = _load()
        _deadline = _Deadline()
        timer = threading.Timer(OCR_PAGE_SECONDS, _deadline.expire)
        timer.start()
        try:
            result = engine(pixels)
            expired = _deadline.expired
        except Exception as exc:  # noqa: BLE001 - the engine wraps onnxruntime's errors in its own types
            if not _deadline.expired:
                raise ParseError("OCR could not read a page of this file.") from exc
            expired = True
        finally:
            timer.cancel()
            _deadline = None
    if expired:
        raise ParseError(f"OCR of a page took longer than {OCR_PAGE_SECONDS:g} seconds, over the limit; "
                         "upload a smaller or clearer scan.")
    if result.boxes is None or not result.txts:
        return ""
    boxes = [TextBox(float(min(p[1] for p in box)), float(max(p[1] for p in box)), float(min(p[0] for p in box)), text)
             for box, text in zip(result.boxes, result.txts, strict=True) if text.strip()]
    return split_joined_words(lines_text(boxes))


def lines_text(boxes: list[TextBox]) -> str:
    """Boxes of text grouped into lines (a box whose middle lies within a line's height joins it),
    each line left to right; lines separated by a blank line where the gap exceeds a line's height."""
    lines: list[list[TextBox]] = []
    for box in sorted(boxes, key=lambda b: (b.top, b.left)):
        middle = (box.top + box.bottom) / 2
        if lines and lines[-1][0].top <= middle <= lines[-1][0].bottom:
            lines[-1].append(box)
        else:
            lines.append([box])
    out: list[str] = []
    previous_bottom = None
    for line in lines:
        top = min(b.top for b in line)
        bottom = max(b.bottom for b in line)
        if previous_bottom is not None and top - previous_bottom > bottom - top:
            out.append("")
        out.append(" ".join(b.text.strip() for b in sorted(line, key=lambda b: b.left)))
        previous_bottom = bottom
    return "\n".join(out)
