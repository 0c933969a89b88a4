"""Scanned PDF pages and images read by OCR (corpus.ingest.parse.ocr): the text with its page
offsets, only the pages without a text layer, progress per page, and every bound refusing with a
message instead of a crash. The scans are made here (chat.evaluation.scans), small, so the engine
reads each in a second or two."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from chat.evaluation.scans import degrade, image_pdf, png, render_pages
from corpus.ingest.parse import ParseError, ocr, parse_document
from corpus.ingest.parse.formats import PDF, PNG, TIFF
from corpus.ingest.parse.ocr import TextBox, lines_text, scaled_to_bound
from reliability import bombs
from tests.corpus.ingest_helpers import eager_media  # noqa: F401

SMALL = {"size": (900, 200), "font_size": 34, "wrap": 40, "margin": 40}
HERONS = "Herons stand still in shallow water."
INVOICE = "Payment is due within thirty days."


def page(text: str, **kwargs) -> Image.Image:
    pages, _texts = render_pages([text], **{**SMALL, **kwargs})
    return pages[0]


def parse_error(data: bytes, filename: str) -> str:
    with pytest.raises(ParseError) as caught:
        parse_document(data, filename=filename)
    return str(caught.value)


def test_a_png_is_read_by_ocr():
    document = parse_document(png(degrade(page(HERONS), seed=1, angle=0.8, noise=0.01)), filename="herons.png")

    assert document.media_type == PNG
    assert document.text == HERONS
    assert document.pages == [0]
    assert document.title == "herons"


def test_a_scanned_pdf_gets_each_pages_text_at_its_offset_with_progress():
    data = image_pdf([page(HERONS), page(INVOICE)])
    progress = []

    document = parse_document(data, filename="scan.pdf", on_progress=lambda done, total: progress.append((done, total)))

    assert document.media_type == PDF
    assert document.text == f"{HERONS}\n\n{INVOICE}"
    assert document.pages == [0, len(HERONS) + 2]
    assert progress == [(1, 2), (2, 2)]


def test_a_mixed_pdf_is_read_by_ocr_only_on_its_scanned_page():
    from fpdf import FPDF

    pdf = FPDF(format=(160, 45))  # small pages: OCR renders the whole page
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.cell(text="The text layer says the pond is deep.")
    pdf.add_page()
    pdf.image(io.BytesIO(png(page(INVOICE))), x=5, y=5, w=150)
    progress = []

    document = parse_document(bytes(pdf.output()), filename="mixed.pdf",
                              on_progress=lambda done, total: progress.append((done, total)))

    assert document.text == f"The text layer says the pond is deep.\n\n{INVOICE}"
    assert document.pages == [0, document.text.index(INVOICE)]
    assert progress == [(1, 1)]  # one page read by OCR, the other from its text layer


def test_a_multi_page_tiff_is_one_page_per_frame():
    out = io.BytesIO()
    page(HERONS).save(out, "TIFF", save_all=True, append_images=[page(INVOICE)])

    document = parse_document(out.getvalue(), filename="scan.tif")

    assert (document.media_type, document.text) == (TIFF, f"{HERONS}\n\n{INVOICE}")
    assert document.pages == [0, len(HERONS) + 2]


def test_an_image_claiming_too_many_pixels_is_refused_unread():
    assert parse_error(bombs.png_claiming(12_000, 12_000), "big.png") == (
        "The image is 12,000 × 12,000 pixels, over the limit of 80,000,000 pixels (a decompression bomb, or a "
        "scan at too high a resolution); it was not read.")
    # Past Pillow's own bound, refused as it opens the file.
    assert parse_error(bombs.png_claiming(60_000, 60_000), "bomb.png") == (
        "The image is over the limit of 80,000,000 pixels (a decompression bomb, or a scan at too high a "
        "resolution); it was not read.")


def test_a_large_image_is_scaled_down_to_the_pixel_bound(settings, monkeypatch):
    monkeypatch.setattr(ocr, "OCR_MAX_PIXELS", 1_000_000)

    scaled = scaled_to_bound(Image.new("L", (4000, 3000), 255))

    assert scaled.width * scaled.height <= 1_000_000
    assert (scaled.width, scaled.height) == (1154, 866)  # the proportions kept
    small = Image.new("L", (800, 600), 255)
    assert scaled_to_bound(small) is small


def test_a_page_over_the_time_limit_fails_with_a_message(settings, monkeypatch):
    monkeypatch.setattr(ocr, "OCR_PAGE_SECONDS", 0.001)

    assert parse_error(png(page(HERONS)), "slow.png") == (
        "OCR of a page took longer than 0.001 seconds, over the limit; upload a smaller or clearer scan.")


def test_too_many_scanned_pages_are_refused_before_any_is_read(settings, monkeypatch):
    monkeypatch.setattr(ocr, "OCR_MAX_PAGES", 1)

    assert parse_error(image_pdf([page(HERONS), page(INVOICE)]), "book.pdf") == (
        "The PDF has 2 scanned pages without a text layer; OCR reads at most 1 pages of one document: split it "
        "into smaller files.")


def test_a_corrupt_tiff_is_refused_as_damaged():
    assert parse_error(bombs.tiff_truncated(), "torn.tiff") == (
        "The image file is damaged or incomplete and could not be read.")


def test_a_blank_image_is_refused_with_no_text_found():
    assert parse_error(png(Image.new("L", (400, 300), 255)), "blank.png") == (
        "No text was found in the image (OCR read nothing).")


def test_with_ocr_turned_off_images_are_refused(settings):
    settings.OCR_ENABLED = False

    assert parse_error(png(page(HERONS)), "herons.png") == (
        "Images are read by OCR, which is turned off on this server (OCR_ENABLED=0).")


def test_boxes_are_grouped_into_lines_and_paragraphs():
    boxes = [TextBox(100, 130, 300, "right"), TextBox(102, 128, 10, "left"), TextBox(140, 170, 10, "next line"),
             TextBox(250, 280, 10, "new paragraph")]

    assert lines_text(boxes) == "left right\nnext line\n\nnew paragraph"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_scans_uploaded_become_searchable_with_their_page_numbers(user):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from chat.retrieval.search import search
    from corpus import services
    from corpus.models import Chunk, Collection, Document

    # The smallest chunks (16 tokens), so each page's text makes chunks of its own.
    collection = Collection.objects.create(slug="scans", name="Scans", owner=user, chunk_size=16, chunk_overlap=0)
    scans, shown = render_pages([f"{HERONS} They wait for fish.", f"{INVOICE} Late payers owe a fee."],
                                **{**SMALL, "size": (900, 230)})  # three lines a page: a paragraph each
    uploads = {"scan.pdf": image_pdf(scans), "herons.png": png(page(HERONS))}
    for name, data in uploads.items():
        result = services.document_upload(collection=collection, file=SimpleUploadedFile(name, data))
        document = Document.objects.get(pk=result.document.pk)
        assert (document.status, document.error) == (Document.Status.READY, ""), name

    scan = Document.objects.get(source="scan.pdf")
    assert len(scans) == 2 and scan.text == "\n\n".join(shown)
    assert scan.pages == [0, scan.text.index(INVOICE)]
    found = search(query="payment due within thirty days", collections=Collection.objects.filter(pk=collection.pk),
                   mode="keyword", k=1, rse=None)
    best = found.chunks[0]
    assert best.document.id == scan.pk and INVOICE in best.text
    assert Chunk.objects.get(pk=best.chunk_id).page == 2
    image = Document.objects.get(source="herons.png")
    assert (image.media_type, image.text, image.pages) == (PNG, HERONS, [0])
    assert set(Chunk.objects.filter(document=image).values_list("page", flat=True)) == {1}
