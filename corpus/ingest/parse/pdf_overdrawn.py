"""PDF text drawn twice at the same place, read once.

Producers draw some text twice, a hair apart: troff's artificial bold (`.bd`) overstrikes every
glyph, a text shadow (CSS `text-shadow` printed by Chromium, LibreOffice's shadowed characters)
draws a heading again under itself. pypdf reads both drawings, so the text says
"AAbbssttrraacctt" or "Ferry timetable noticeFerry timetable notice"; `pdftotext` and a reader
see the text once.

pypdf gives no character positions, and pdfminer (through pdfplumber) reads a page about four
times slower, so only a page whose pypdf text shows the marks of a second drawing (overdrawn())
is read again by pdfplumber, each character drawn twice at the same place, within
SAME_PLACE_EM of its size, dropped: a character is one character wherever it is drawn twice.
"""

from __future__ import annotations

import io
import logging
import re
import statistics

logger = logging.getLogger(__name__)

# Two drawings of one character are this close (in ems of the font size), at least MIN_TOLERANCE
# points: a shadow is 1-2 px (0.75-1.5 pt) off, overstriking a fraction of a point. The narrowest
# neighbours that are two characters ("ll", "ii", "..") stand 0.25 em apart.
SAME_PLACE_EM = 0.15
MIN_TOLERANCE = 1.0
# Words are apart where the gap between two characters is wider than this many ems of the size.
SPACE_EM = 0.15
# A word whose every letter comes twice ("AAbbss"), of at least this many letters once undoubled.
MIN_DOUBLED_LETTERS = 3
# A line that is a piece of text twice over ("Notice Notice", "TitleTitle"), the piece this long.
_REPEATED_LINE = re.compile(r"^\s*(\S.{3,}?)\s*\1\s*$", re.MULTILINE)


def doubled_word(word: str) -> bool:
    """Whether every character of `word` is doubled ("AAbbssttrraacctt"), letters among them."""
    return (len(word) >= 2 * MIN_DOUBLED_LETTERS and len(word) % 2 == 0 and word[::2] == word[1::2]
            and len(set(word[::2])) > 1 and any(c.isalpha() for c in word))


def overdrawn(text: str) -> bool:
    """Whether a page's text layer, as pypdf reads it, shows text drawn twice: a word of doubled
    letters, or a line that is the same text twice."""
    return any(doubled_word(word) for word in text.split()) or bool(_REPEATED_LINE.search(text))


def drawn_once(data: bytes, indexes: list[int]) -> dict[int, str]:
    """The text of the pages at `indexes` (0-based), each character drawn twice at one place read
    once, by index; a page pdfplumber cannot read is left out (its pypdf text stands)."""
    if not indexes:
        return {}
    import pdfplumber

    texts: dict[int, str] = {}
    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            for index in indexes:
                page = pdf.pages[index]
                try:
                    texts[index] = _page_text(page)
                finally:
                    page.close()  # pdfplumber caches each page's objects until then
    except Exception:  # noqa: BLE001 - a refinement: the text layer read by pypdf stands
        logger.info("pdfplumber could not read a PDF's overdrawn pages; their text layer is kept", exc_info=True)
    return texts


def _page_text(page) -> str:
    chars = [char for char in page.chars if char["text"].strip()]
    if not chars:
        return page.extract_text() or ""
    size = statistics.median(char["size"] for char in chars)
    tolerance = max(MIN_TOLERANCE, SAME_PLACE_EM * size)
    again = {id(char) for char in drawn_again(chars, tolerance)}
    once = page.filter(lambda obj: id(obj) not in again)
    # A gap wider than a fraction of an em is a space: the default of 3 points runs the words of
    # small type together ("Abstractwordshere").
    return once.extract_text(x_tolerance_ratio=SPACE_EM) or ""


def drawn_again(chars: list[dict], tolerance: float) -> list[dict]:
    """The characters drawn again: the same text as an earlier one whose origin (the text
    matrix's, where the glyph sits on its baseline) is within `tolerance` points on both axes.
    Origins, not boxes: pdfminer gives two drawings of one glyph boxes of different heights when
    their fonts describe their descent differently (Chromium's shadowed headings)."""
    seen: dict[tuple[str, int, int], list[tuple[float, float]]] = {}
    again = []
    for char in chars:
        x, y = char["matrix"][4], char["matrix"][5]
        cell_x, cell_y = int(x // tolerance), int(y // tolerance)
        near = [point for dx in (-1, 0, 1) for dy in (-1, 0, 1)
                for point in seen.get((char["text"], cell_x + dx, cell_y + dy), ())]
        if any(abs(x - px) <= tolerance and abs(y - py) <= tolerance for px, py in near):
            again.append(char)
        else:
            seen.setdefault((char["text"], cell_x, cell_y), []).append((x, y))
    return again
