"""Scans made on purpose: a known text rendered to page images (Pillow's own font, so the same on
every machine), degraded like a scanner degrades a page (a slight rotation, speckle noise, a
little blur), and wrapped in an image-only PDF; and the character error rate of a text read
back. Used by `manage.py eval_ocr` and by the OCR tests."""

from __future__ import annotations

import io
import random
import textwrap

from PIL import Image, ImageDraw, ImageFilter, ImageFont

PAGE_SIZE = (1240, 1754)  # A4 at 150 dpi
MARGIN = 110
FONT_SIZE = 30
LINE_HEIGHT = 44
WRAP = 58  # characters per line at FONT_SIZE within the margins


def render_pages(paragraphs: list[str], *, size: tuple[int, int] = PAGE_SIZE, font_size: int = FONT_SIZE,
                 wrap: int = WRAP, margin: int = MARGIN) -> tuple[list[Image.Image], list[str]]:
    """The paragraphs typeset on as many white greyscale pages as they need; returns (pages, the
    text each page shows, lines joined by newlines and paragraphs by blank lines)."""
    font = ImageFont.load_default(size=font_size)
    line_height = int(font_size * LINE_HEIGHT / FONT_SIZE)
    width, height = size
    per_page = (height - 2 * margin) // line_height
    lines: list[str] = []
    for paragraph in paragraphs:
        if lines:
            lines.append("")
        lines += textwrap.wrap(paragraph, wrap)
    pages, texts = [], []
    for start in range(0, len(lines), per_page):
        chunk = lines[start:start + per_page]
        while chunk and not chunk[0]:
            chunk = chunk[1:]
        page = Image.new("L", size, 255)
        draw = ImageDraw.Draw(page)
        for row, line in enumerate(chunk):
            draw.text((margin, margin + row * line_height), line, font=font, fill=0)
        pages.append(page)
        texts.append("\n".join(chunk).strip())
    return pages, texts


def degrade(page: Image.Image, *, seed: int, angle: float = 1.2, noise: float = 0.03) -> Image.Image:
    """The page as a cheap scanner returns it: rotated by `angle` degrees (white corners), a share
    `noise` of its pixels flipped to random greys, slightly blurred."""
    rng = random.Random(seed)
    rotated = page.rotate(angle, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=255)
    pixels = rotated.load()
    width, height = rotated.size
    for _ in range(int(width * height * noise)):
        pixels[rng.randrange(width), rng.randrange(height)] = rng.randrange(256)
    return rotated.filter(ImageFilter.GaussianBlur(0.6))


def image_pdf(pages: list[Image.Image], *, dpi: int = 150) -> bytes:
    """An image-only PDF (no text layer), one page per image, as a scanner writes one."""
    out = io.BytesIO()
    pages[0].save(out, "PDF", save_all=True, append_images=pages[1:], resolution=dpi)
    return out.getvalue()


def png(page: Image.Image) -> bytes:
    out = io.BytesIO()
    page.save(out, "PNG")
    return out.getvalue()


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions), in O(len(b)) memory."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def character_error_rate(reference: str, read: str) -> float:
    """Edit distance / reference length, white space runs counted as one space (a scan's line
    breaks and spacing are layout, not text)."""
    reference, read = " ".join(reference.split()), " ".join(read.split())
    return edit_distance(reference, read) / max(1, len(reference))
