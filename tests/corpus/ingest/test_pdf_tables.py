"""PDF tables kept as tables: a ruled table (fpdf2 draws one as a real PDF table is drawn) becomes
Markdown rows under their header at its place in the page's text; pages without one keep the
text layer pypdf gives."""

from __future__ import annotations

from pathlib import Path

from corpus.ingest.parse import parse_document
from corpus.ingest.parse.pdf_tables import draws_rules

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "files"


def pdf_with_table(rows: list[tuple[str, ...]]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 6, text="Opening hours of the branch libraries are listed below.")
    with pdf.table() as table:
        for row in rows:
            cells = table.row()
            for cell in row:
                cells.cell(cell)
    pdf.multi_cell(0, 6, text="All branches are closed on Sundays.")
    return bytes(pdf.output())


def test_a_ruled_table_becomes_markdown_rows_under_their_header():
    rows = [("Branch", "Weekdays", "Saturday"), ("Hillside", "9:00-18:00", "10:00-14:00"),
            ("Riverside", "12:00-20:00", "closed")]

    document = parse_document(pdf_with_table(rows), filename="hours.pdf")

    assert document.text == (
        "Opening hours of the branch libraries are listed below.\n\n"
        "| Branch | Weekdays | Saturday |\n| --- | --- | --- |\n"
        "| Hillside | 9:00-18:00 | 10:00-14:00 |\n| Riverside | 12:00-20:00 | closed |\n\n"
        "All branches are closed on Sundays.")


def test_a_long_table_repeats_its_header_so_every_block_says_what_its_cells_mean():
    rows = [("Branch", "Visitors")] + [(f"Branch number {i}", str(i * 37)) for i in range(30)]

    text = parse_document(pdf_with_table(rows), filename="visitors.pdf").text

    assert text.count("| Branch | Visitors |") > 2
    assert "| Branch number 29 | 1073 |" in text


def test_pages_without_ruled_tables_keep_their_text_layer():
    assert parse_document((FILES / "two_pages.pdf").read_bytes(), filename="two_pages.pdf").text == (
        "Page one says hello.\nSecond line on page one.\n\nPage two says goodbye.")


def test_only_pages_drawing_a_grid_are_read_for_tables():
    assert draws_rules(b"28.35 791.54 269.29 22.00 re S\n" * 4)
    grid = b"".join(b"10 %d m 200 %d l S\n" % (y, y) for y in (10, 20, 30)) + \
        b"".join(b"%d 10 m %d 30 l S\n" % (x, x) for x in (10, 100, 200))
    assert draws_rules(grid)
    # Horizontal rules alone (a header line, underlined links) are no table.
    assert not draws_rules(b"".join(b"10 %d m 200 %d l S\n" % (y, y) for y in range(10, 200, 10)))
    assert not draws_rules(b"BT (text) Tj ET")
