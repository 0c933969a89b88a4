"""The spreadsheet, slide, OpenDocument, EPUB and email parsers on real files made by their libraries
(tests/formats.py), damaged and hostile ones included."""

from __future__ import annotations

import io
import time
import zipfile

import pytest

from corpus.ingest.parse import ParseError, detect_media_type, limits, parse_document
from corpus.ingest.parse.detect import CSV, EML, EPUB, ODT, PPTX, XLSX, ZIP
from corpus.ingest.parse.tables import BLOCK_CHARS
from reliability import bombs
from tests import formats
from tests.corpus.ingest.test_parse_limits import parse_in_subprocess


def parse_error(data: bytes, filename: str) -> str:
    with pytest.raises(ParseError) as caught:
        parse_document(data, filename=filename)
    return str(caught.value)


def heading_lines(document) -> list[tuple[int, str, str]]:
    """(level, title, the line of text at the heading's offset)."""
    return [(h.level, h.title, document.text[h.start:].split("\n", 1)[0]) for h in document.headings]


# --- detection ---

@pytest.mark.parametrize(("make", "kind"), [
    (formats.budget_xlsx, XLSX), (lambda: formats.pptx([("A", "b", "")]), PPTX), (formats.odt, ODT),
    (lambda: formats.epub([("c.xhtml", "<p>x</p>")]), EPUB),
])
def test_zip_formats_are_recognised_by_content_whatever_the_name(make, kind):
    assert detect_media_type("upload.bin", make()) == kind
    assert detect_media_type("upload.docx", make()) == kind


def test_csv_and_eml_are_recognised_by_extension():
    assert detect_media_type("table.csv", b"a,b\n1,2\n") == CSV
    assert detect_media_type("table.tsv", b"a\tb\n1\t2\n") == CSV
    assert detect_media_type("note.eml", formats.eml()) == EML


def test_a_zip_named_as_a_zip_format_is_that_format_so_its_parser_says_it_is_damaged():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("notes.txt", "hello")
    data = out.getvalue()

    assert detect_media_type("notes.zip", data) == ZIP
    assert parse_error(data, "budget.xlsx") == (
        "The spreadsheet is damaged or is not an .xlsx workbook and could not be read.")
    assert parse_error(data, "talk.pptx") == "The presentation is damaged or is not a .pptx file and could not be read."
    assert parse_error(data, "log.odt") == (
        "The OpenDocument file is damaged or is not an .odt document and could not be read.")
    assert parse_error(data, "book.epub") == "The EPUB book is damaged or is not an .epub file and could not be read."


def test_a_plain_zip_is_refused_naming_every_supported_format():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("notes.txt", "hello")

    message = parse_error(out.getvalue(), "notes.zip")

    assert message.startswith("The file is a ZIP archive, not a document we read")
    assert "CSV, PowerPoint (.pptx), OpenDocument text (.odt), EPUB, email (.eml), PNG, JPEG or TIFF" in message


# --- XLSX ---

def test_xlsx_sheets_are_sections_of_markdown_tables_with_cached_formula_values():
    document = parse_document(formats.budget_xlsx(), filename="budget.xlsx")

    assert document.media_type == XLSX
    assert document.title == "Household budget"
    # The empty column B, the empty row and the empty sheet are left out; the formula shows its value.
    assert document.text == (
        "Sheet: Budget\n\n"
        "| Item | Cost | Paid on |\n| --- | --- | --- |\n| Rent | 1200 | 2025-03-01 |\n| Seeds | 12.5 |  |\n"
        "| Total | 1212.5 |  |\n\n"
        "Sheet: Contacts\n\n"
        "| Name | Role |\n| --- | --- |\n| Ada | Gardener \\| lead |")
    assert heading_lines(document) == [(1, "Sheet: Budget", "Sheet: Budget"),
                                       (1, "Sheet: Contacts", "Sheet: Contacts")]


def test_a_long_sheet_repeats_its_header_so_every_block_of_rows_says_what_its_cells_mean():
    rows = [["Plot", "Crop", "Kilograms"]] + [[f"P{i}", f"crop {i}", i] for i in range(300)]
    document = parse_document(formats.xlsx({"Harvest": rows}), filename="harvest.xlsx")

    blocks = document.text.split("\n\n")[1:]
    assert len(blocks) > 5
    for block in blocks:
        lines = block.split("\n")
        assert lines[:2] == ["| Plot | Crop | Kilograms |", "| --- | --- | --- |"]
        assert len(block) <= BLOCK_CHARS + 2 * len(lines[0]) + 60
    row_lines = [line for block in blocks for line in block.split("\n")[2:]]
    assert row_lines == [f"| P{i} | crop {i} | {i} |" for i in range(300)]


def test_a_title_row_above_a_sheets_table_is_text_not_its_header():
    # A tracker's title in A1 (merged across the columns in Excel) and an empty row above the column
    # names: the names head the table, so a row is read as "Employee: Priya Shah; Start: ...".
    rows = [["Annual leave tracker 2027"], [], ["Employee", "Start", "End"], ["Priya Shah", "2027-03-01", "2027-03-05"]]
    document = parse_document(formats.xlsx({"Leave": rows, "Names": [["Name"], ["Ada"], ["Bo"]]}),
                              filename="leave.xlsx")

    assert document.text == (
        "Sheet: Leave\n\nAnnual leave tracker 2027\n\n"
        "| Employee | Start | End |\n| --- | --- | --- |\n| Priya Shah | 2027-03-01 | 2027-03-05 |\n\n"
        "Sheet: Names\n\n| Name |\n| --- |\n| Ada |\n| Bo |")  # a one-column list keeps its first row as header


def test_a_sheet_shows_its_percentages_as_percentages():
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Department", "Spent"])
    sheet.append(["Engineering", 0.925])
    sheet["B2"].number_format = "0.0%"
    out = io.BytesIO()
    workbook.save(out)
    assert parse_document(out.getvalue(), filename="budget.xlsx").text.endswith("| Engineering | 92.5% |")


def test_a_spreadsheet_over_the_cell_limit_is_refused(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_SPREADSHEET_CELLS", 1_000)
    assert parse_document(formats.xlsx({"S": [[i, i] for i in range(400)]}), filename="s.xlsx").text

    assert parse_error(formats.xlsx({"S": [[i, i, i] for i in range(400)]}), "s.xlsx") == (
        "The spreadsheet has more than 1,000 cells, over the limit; split it into smaller files.")


def test_a_sheet_spanning_the_whole_grid_is_refused_quickly():
    # Two cells, at A1 and XFD1048576: the empty rows and the padding openpyxl adds to a row count
    # against the cell limit, so this does not walk 17 billion empty cells.
    started = time.monotonic()

    assert parse_error(bombs.xlsx_claiming_everything(), "far.xlsx") == (
        "The spreadsheet has more than 500,000 cells, over the limit; split it into smaller files.")
    assert time.monotonic() - started < 30  # 1.2 s on a quiet machine


@pytest.mark.slow
def test_a_sheet_of_600k_cells_is_refused_with_bounded_memory(tmp_path):
    # Under the markup limit, so openpyxl streams it until the cell limit (500,000) stops it.
    result = parse_in_subprocess(tmp_path, bombs.xlsx_cells(600, 1000), "cells.xlsx")

    assert result["outcome"] == (
        "The spreadsheet has more than 500,000 cells, over the limit; split it into smaller files.")
    assert result["peak"] < 300 * 1024 * 1024, result  # 151 MB measured
    assert result["seconds"] < 120, result  # 11 s on a shared machine


def test_xlsx_zip_bomb_is_refused(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_DECOMPRESSED_BYTES", 2_000_000)

    assert "The spreadsheet unpacks to more than 1.9 MB, over the limit" in parse_error(
        bombs.xlsx_bomb(3_000_000), "bomb.xlsx")


def test_xlsx_text_stops_at_the_character_limit(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_DOCUMENT_CHARS", 500)
    # One shared string used in every cell: the file is small, its text is not.
    data = formats.xlsx({"S": [["x" * 100] * 10 for _ in range(10)]})

    assert parse_error(data, "s.xlsx").startswith("The document's text is longer than 500 characters")


# --- CSV ---

def test_csv_dialect_is_sniffed_and_the_first_row_is_the_header():
    data = 'name;qty;note\nBeans;3;"fresh; green"\n;;\nPeas;4;\n'.encode("cp1252")
    document = parse_document(data, filename="stock.csv")

    assert document.media_type == CSV
    assert document.title == "stock"
    assert document.text == ("| name | qty | note |\n| --- | --- | --- |\n| Beans | 3 | fresh; green |\n"
                             "| Peas | 4 |  |")
    assert document.headings == []


def test_a_title_line_above_a_csv_table_is_text_not_its_header():
    # A spreadsheet saved as CSV: its title row comes first, padded with empty cells.
    data = b"Annual leave tracker 2027,,\nEmployee,Start,End\nPriya Shah,2027-03-01,2027-03-05\n"
    assert parse_document(data, filename="leave.csv").text == (
        "Annual leave tracker 2027\n\n| Employee | Start | End |\n| --- | --- | --- |\n"
        "| Priya Shah | 2027-03-01 | 2027-03-05 |")


def test_tsv_and_latin1_csv_are_read():
    assert parse_document("Crop\tPrix\nPoireau\t2 €\n".encode("cp1252"), filename="prix.tsv").text == (
        "| Crop | Prix |\n| --- | --- |\n| Poireau | 2 € |")


def test_one_column_csv_falls_back_to_commas():
    assert parse_document(b"word\nalpha\nbeta\n", filename="words.csv").text == (
        "| word |\n| --- |\n| alpha |\n| beta |")


def test_csv_with_an_unclosed_quote_past_the_field_limit_is_refused():
    data = b'a,b\n1,"' + b"x" * 200_000 + b"\n"

    assert parse_error(data, "broken.csv") == (
        "The CSV file could not be read (line 2): field larger than field limit (131072).")


def test_csv_over_the_cell_limit_is_refused(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_SPREADSHEET_CELLS", 100)

    assert parse_error(b"a,b\n" + b"1,2\n" * 60, "big.csv") == (
        "The CSV file has more than 100 cells, over the limit; split it into smaller files.")


def test_binary_named_csv_is_refused():
    assert parse_error(bytes(range(256)) * 10, "data.csv") == (
        "The file looks like binary data, not text, so there is nothing to read in it.")


# --- PPTX ---

def test_pptx_slides_are_sections_with_their_text_tables_and_notes():
    data = formats.pptx([("Why compost", "Soil improves\nWorms thrive", "Mention the worms"),
                         ("Costs", "Cheap", "")], table=[["Crop", "Kg"], ["Beans", "14"]])
    document = parse_document(data, filename="talk.pptx")

    assert document.media_type == PPTX
    assert document.title == "Why compost"
    assert document.text == ("Slide 1: Why compost\n\nSoil improves\nWorms thrive\n\nNotes: Mention the worms\n\n"
                             "Slide 2: Costs\n\nCheap\n\n"
                             "Slide 3\n\n| Crop | Kg |\n| --- | --- |\n| Beans | 14 |")
    assert heading_lines(document) == [(1, "Slide 1: Why compost", "Slide 1: Why compost"),
                                       (1, "Slide 2: Costs", "Slide 2: Costs"), (1, "Slide 3", "Slide 3")]


def test_pptx_with_a_huge_slide_is_refused(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_MARKUP_ELEMENTS", 50_000)

    assert parse_error(bombs.pptx_huge_slide(60_000), "huge.pptx") == (
        "The presentation has more than 50,000 markup elements, over the limit; split it into smaller files.")


def test_pptx_text_stops_at_the_character_limit(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_DOCUMENT_CHARS", 200)
    data = formats.pptx([(f"Slide {i}", "Words " * 20, "") for i in range(5)])

    assert parse_error(data, "long.pptx").startswith("The document's text is longer than 200 characters")


# --- ODT ---

def test_odt_headings_paragraphs_lists_and_tables():
    document = parse_document(formats.odt(), filename="log.odt")

    assert document.media_type == ODT
    assert document.title == "Harvest log"
    assert document.text == ("Harvest\n\nBeans came in early.  Peas\nfollowed late.\n\n- Carrots\n- Leeks\n\n"
                             "Yields\n\n| Crop | Kilograms |\n| --- | --- |\n| Beans | 14 |")
    assert heading_lines(document) == [(1, "Harvest", "Harvest"), (2, "Yields", "Yields")]


def test_odt_list_items_are_markdown_ones_numbered_by_their_style_and_nested():
    from odf.opendocument import OpenDocumentText
    from odf.text import List, ListItem, ListLevelStyleBullet, ListLevelStyleNumber, ListStyle, P

    from chat.answering.blocks import ITEM, parse_blocks

    document = OpenDocumentText()
    style = ListStyle(name="Steps")
    style.addElement(ListLevelStyleNumber(level=1, numformat="1", numsuffix="."))
    style.addElement(ListLevelStyleBullet(level=2, bulletchar="•"))
    document.automaticstyles.addElement(style)

    def listed(texts, **attributes):
        items = List(**attributes)
        for text in texts:
            item = ListItem()
            for part in text if isinstance(text, tuple) else (text,):
                item.addElement(P(text=part) if isinstance(part, str) else part)
            items.addElement(item)
        return items

    document.text.addElement(P(text="Sowing:"))
    document.text.addElement(listed(["Dig the bed.", ("Sow the seeds:", listed(["beans", "peas"]), "Water them.")],
                                    stylename="Steps"))
    document.text.addElement(P(text="Later:"))
    document.text.addElement(listed(["Harvest."], stylename="Steps", continuenumbering="true"))
    document.text.addElement(listed(["Compost the stalks."]))
    out = io.BytesIO()
    document.write(out)
    text = parse_document(out.getvalue(), filename="sowing.odt").text

    assert text == ("Sowing:\n\n1. Dig the bed.\n2. Sow the seeds:\n    - beans\n    - peas\n\nWater them.\n\n"
                    "Later:\n\n3. Harvest.\n\n- Compost the stalks.")
    assert [b.text for b in parse_blocks(text) if b.kind == ITEM] == [
        "Dig the bed.", "Sow the seeds:", "beans", "peas", "Harvest.", "Compost the stalks."]


def test_odt_declaring_entities_is_refused_before_parsing():
    # "Billion laughs": entities expanding exponentially. No ODT part needs a DTD.
    data = bombs.odt_with_content(
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b'<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0">&b;'
        b"</office:document-content>")

    assert parse_error(data, "laughs.odt") == (
        "The OpenDocument file declares XML entities (a DTD), which no document of its kind needs; it was not read.")


# --- EPUB ---

def test_epub_chapters_in_spine_order_each_with_a_heading():
    data = formats.epub([("c1.xhtml", "<h1>Frogs</h1><p>Frogs sing at night.</p>"),
                         ("c2.xhtml", "<p>Newts hide under stones.</p>")])
    document = parse_document(data, filename="pond.epub")

    assert document.media_type == EPUB
    assert document.title == "Pond Life"
    assert document.text == "Frogs\n\nFrogs sing at night.\n\nc2.xhtml\n\nNewts hide under stones."
    assert heading_lines(document) == [(1, "Frogs", "Frogs"), (1, "c2.xhtml", "c2.xhtml")]


def test_epub_spine_entries_outside_the_book_are_never_read():
    # The archive holds an entry named with ../ and the spine points at it, at an absolute path and
    # at a URL: none is read, the one chapter inside the book is.
    data = formats.epub([("c1.xhtml", "<p>Inside the book.</p>")],
                        hrefs=["../../evil.xhtml", "/etc/passwd", "file:///etc/passwd", "c1.xhtml"],
                        extra={"../../evil.xhtml": b"<html><body><p>Escaped!</p></body></html>"})

    document = parse_document(data, filename="sly.epub")

    assert document.text == "c1.xhtml\n\nInside the book."  # its heading: the chapter's <title>
    assert "Escaped" not in document.text and "root:" not in document.text


def test_epub_with_only_chapters_outside_the_book_has_no_text():
    data = formats.epub([], hrefs=["../../evil.xhtml"], extra={"../../evil.xhtml": b"<p>Escaped!</p>"})

    assert parse_error(data, "sly.epub") == "The EPUB book has no chapter with text."


def test_epub_without_container_is_damaged():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr("OEBPS/c1.xhtml", "<p>hello</p>")

    assert parse_error(out.getvalue(), "book.epub") == (
        "The EPUB book is damaged or is not an .epub file and could not be read.")


# --- EML ---

def test_eml_header_block_body_and_text_attachments():
    document = parse_document(formats.eml(), filename="delivery.eml")

    assert document.media_type == EML
    assert document.title == "Compost délivery on Friday"
    assert document.text == (
        "From: Ada Gardener <ada@example.com>\nTo: Bob Digger <bob@example.com>\n"
        "Date: Mon, 03 Mar 2025 10:00:00 +0000\nSubject: Compost délivery on Friday\n\n"
        "Hi Bob,\n\nThe compost arrives Friday morning. Leave the gate open.\n\nAda\n\n"
        "Attachment: order.txt\n\nBags: 12\nPrice per bag: 4 EUR\n\n"
        "Other attachments (not read): invoice.pdf (application/pdf)")
    assert heading_lines(document) == [(1, "Attachment: order.txt", "Attachment: order.txt")]


def test_eml_with_only_html_reads_its_visible_text():
    document = parse_document(formats.eml(html=True, attachments=False), filename="delivery.eml")

    assert document.text.endswith("Subject: Compost délivery on Friday\n\nDelivery\n\n"
                                  "The compost arrives Friday morning.")
    assert heading_lines(document) == [(1, "Delivery", "Delivery")]


def test_a_file_without_email_headers_is_not_an_email():
    assert parse_error(b"just some words\nand more\n", "note.eml") == (
        "The file is not an email message (.eml): it has no From, To, Cc, Date or Subject header.")


def test_malformed_eml_fails_with_a_message_or_reads_what_it_can():
    # A broken MIME structure: a multipart without its boundary, a bad base64 body, a bogus charset.
    data = (b"From: a@example.com\nSubject: Broken\nContent-Type: multipart/mixed; boundary=\"zzz\"\n\n"
            b"--zzz\nContent-Type: text/plain; charset=no-such-charset\nContent-Transfer-Encoding: base64\n\n"
            b"@@@not base64@@@\n")

    document = parse_document(data, filename="broken.eml")

    assert document.title == "Broken"
    assert document.text.startswith("From: a@example.com\nSubject: Broken")


def test_eml_nested_200_deep_finds_its_body():
    document = parse_document(bombs.eml_nested(200), filename="deep.eml")

    assert document.text == "From: a@example.com\nSubject: Deep\n\ndeep text"


def test_eml_nested_too_deeply_is_refused():
    assert parse_error(bombs.eml_nested(5_000), "deep.eml") == "The email's parts are nested too deeply to read."
