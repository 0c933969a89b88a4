"""`manage.py eval_ocr [--text FILE] [--seed N]`

The OCR's character error rate and speed on scans made from a known text: the text is typeset on
A4 pages at 150 dpi (chat.evaluation.scans), and read back through the parser registry
(parse_document, as an upload is) in three variants: the clean pages as PNG files, the pages
degraded like a cheap scan (rotated by 1.2°, 3% of the pixels speckled, blurred) as PNG files,
and the degraded pages as one image-only PDF (rendered again at OCR_DPI before OCR). For each:
the character error rate (edit distance / reference length, white space runs counted as one
space) pages per second (wall clock, the engine loaded beforehand) and the CPU seconds a page takes (all of
the process's threads: what a page costs on a machine shared with other work).
"""

from __future__ import annotations

import time
from pathlib import Path

from django.core.management.base import BaseCommand

from chat.evaluation.scans import character_error_rate, degrade, image_pdf, png, render_pages
from corpus.ingest.parse import ocr, parse_document

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "ocr" / "sample.txt"


class Command(BaseCommand):
    help = "Character error rate and pages per second of the OCR on scans of a known text."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--text", type=Path, default=SAMPLE, help="plain text, paragraphs separated by blank lines")
        parser.add_argument("--seed", type=int, default=29)

    def handle(self, *args, text: Path, seed: int, **options) -> None:
        # Measured, not bounded: on a machine busy with other work a page may take minutes of wall clock.
        ocr.OCR_PAGE_SECONDS = max(ocr.OCR_PAGE_SECONDS, 3600)
        paragraphs = [" ".join(p.split()) for p in text.read_text().split("\n\n") if p.strip()]
        pages, page_texts = render_pages(paragraphs)
        reference = "\n\n".join(page_texts)
        degraded = [degrade(page, seed=seed + i) for i, page in enumerate(pages)]
        # Load the engine first, so the figures are of reading, not of starting.
        parse_document(png(pages[0].crop((0, 0, 1240, 300))), filename="warm-up.png")
        self.stdout.write(f"{len(pages)} pages, {len(reference):,} characters; OCR_DPI={ocr.OCR_DPI}, "
                          f"OCR_MAX_PIXELS={ocr.OCR_MAX_PIXELS:,}")
        self.stdout.write(f"{'variant':<28} {'CER':>7} {'pages/s':>8} {'s/page':>7} {'CPU s/page':>10}")
        variants = [
            ("clean PNG pages", [(png(page), f"page{i}.png") for i, page in enumerate(pages)]),
            ("scanned PNG (noise, 1.2°)", [(png(page), f"scan{i}.png") for i, page in enumerate(degraded)]),
            ("scanned PDF (image-only)", [(image_pdf(degraded), "scan.pdf")]),
        ]
        for name, files in variants:
            started, cpu = time.monotonic(), time.process_time()
            read = "\n\n".join(parse_document(data, filename=filename).text for data, filename in files)
            seconds, cpu = time.monotonic() - started, time.process_time() - cpu
            cer = character_error_rate(reference, read)
            self.stdout.write(f"{name:<28} {cer:>7.2%} {len(pages) / seconds:>8.3f} {seconds / len(pages):>7.1f} "
                              f"{cpu / len(pages):>10.1f}")
