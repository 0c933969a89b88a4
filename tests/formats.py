"""Real sample files of the spreadsheet, slide, OpenDocument, EPUB and email formats, made by their
own libraries (openpyxl, python-pptx, odfpy, the standard library's email package; an EPUB is a
ZIP laid out by its specification: no permissively licensed writer exists). Used by the parser
and pipeline tests and by the reliability harness's hostile files."""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from email.message import EmailMessage


def xlsx(sheets: dict[str, list[list[object]]], *, title: str | None = None) -> bytes:
    """A workbook with one worksheet per entry (rows of values; a str starting with "=" is a formula)."""
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
    if title:
        workbook.properties.title = title
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def budget_xlsx() -> bytes:
    """Made by XlsxWriter, which (unlike openpyxl) stores a formula's computed value as Excel does:
    a budget sheet with a formula, a date, an empty column and an empty row; a contact list; an
    empty sheet; the title property "Household budget"."""
    import xlsxwriter

    out = io.BytesIO()
    workbook = xlsxwriter.Workbook(out, {"in_memory": True})
    workbook.set_properties({"title": "Household budget"})
    dates = workbook.add_format({"num_format": "yyyy-mm-dd"})
    budget = workbook.add_worksheet("Budget")
    budget.write_row(0, 0, ["Item", None, "Cost", "Paid on"])
    budget.write_row(1, 0, ["Rent", None, 1200])
    budget.write_datetime(1, 3, dt.datetime(2025, 3, 1), dates)
    budget.write_row(3, 0, ["Seeds", None, 12.5])
    budget.write(4, 0, "Total")
    budget.write_formula(4, 2, "=C2+C4", None, 1212.5)
    contacts = workbook.add_worksheet("Contacts")
    contacts.write_row(0, 0, ["Name", "Role"])
    contacts.write_row(1, 0, ["Ada", "Gardener | lead"])
    workbook.add_worksheet("Empty")
    workbook.close()
    return out.getvalue()


def pptx(slides: list[tuple[str, str, str]], *, table: list[list[str]] | None = None) -> bytes:
    """A presentation, one slide per (title, body, notes) with the "Title and Content" layout; with
    `table`, a last slide holding that table (first row the header) and no title."""
    from pptx import Presentation
    from pptx.util import Inches

    presentation = Presentation()
    for title, body, notes in slides:
        slide = presentation.slides.add_slide(presentation.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    if table:
        slide = presentation.slides.add_slide(presentation.slide_layouts[6])  # blank
        shape = slide.shapes.add_table(len(table), len(table[0]), Inches(1), Inches(1), Inches(6), Inches(2))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                shape.table.cell(r, c).text = value
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def odt(*, title: str = "Harvest log") -> bytes:
    """A text document: a title property, two headings, paragraphs (one with repeated spaces and a
    line break), a list and a table."""
    from odf.dc import Title
    from odf.opendocument import OpenDocumentText
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import H, LineBreak, List, ListItem, P, S

    document = OpenDocumentText()
    document.meta.addElement(Title(text=title))
    document.text.addElement(H(outlinelevel=1, text="Harvest"))
    paragraph = P(text="Beans came in early.")
    paragraph.addElement(S(c=2))
    paragraph.addText("Peas")
    paragraph.addElement(LineBreak())
    paragraph.addText("followed late.")
    document.text.addElement(paragraph)
    items = List()
    for text in ("Carrots", "Leeks"):
        item = ListItem()
        item.addElement(P(text=text))
        items.addElement(item)
    document.text.addElement(items)
    document.text.addElement(H(outlinelevel=2, text="Yields"))
    table = Table(name="Yields")
    table.addElement(TableColumn(numbercolumnsrepeated=2))
    for row_values in (("Crop", "Kilograms"), ("Beans", "14")):
        row = TableRow()
        for value in row_values:
            cell = TableCell()
            cell.addElement(P(text=value))
            row.addElement(cell)
        table.addElement(row)
    document.text.addElement(table)
    out = io.BytesIO()
    document.write(out)
    return out.getvalue()


def epub(chapters: list[tuple[str, str]], *, title: str = "Pond Life", extra: dict[str, bytes] | None = None,
         hrefs: list[str] | None = None) -> bytes:
    """An EPUB 3 book: chapters as (file name, XHTML body), in the spine in order (`hrefs` overrides
    the spine's paths, e.g. to point outside the book); `extra` parts are added as they are."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")  # first and stored, as required
        archive.writestr("META-INF/container.xml", (
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>"))
        hrefs = hrefs or [name for name, _ in chapters]
        items = "".join(f'<item id="c{i}" href="{href}" media-type="application/xhtml+xml"/>'
                        for i, href in enumerate(hrefs))
        spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(hrefs)))
        archive.writestr("OEBPS/content.opf", (
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f'<dc:identifier id="id">urn:uuid:1</dc:identifier><dc:title>{title}</dc:title>'
            f"<dc:language>en</dc:language></metadata><manifest>{items}</manifest><spine>{spine}</spine></package>"))
        for name, body in chapters:
            archive.writestr(f"OEBPS/{name}", (
                '<?xml version="1.0" encoding="utf-8"?><!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml">'
                f"<head><title>{name}</title></head><body>{body}</body></html>"))
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return out.getvalue()


def eml(*, html: bool = False, attachments: bool = True) -> bytes:
    """An email: headers, a plain-text body (with an HTML alternative, or HTML only when `html`),
    a text attachment and a PDF attachment."""
    message = EmailMessage()
    message["From"] = "Ada Gardener <ada@example.com>"
    message["To"] = "Bob Digger <bob@example.com>"
    message["Date"] = "Mon, 03 Mar 2025 10:00:00 +0000"
    message["Subject"] = "Compost délivery on Friday"
    page = "<html><body><h1>Delivery</h1><p>The compost arrives <b>Friday</b> morning.</p></body></html>"
    if html:
        message.set_content(page, subtype="html")
    else:
        message.set_content("Hi Bob,\n\nThe compost arrives Friday morning. Leave the gate open.\n\nAda\n")
        message.add_alternative(page, subtype="html")
    if attachments:
        message.add_attachment("Bags: 12\nPrice per bag: 4 EUR\n", filename="order.txt")
        message.add_attachment(b"%PDF-1.7 not really", maintype="application", subtype="pdf", filename="invoice.pdf")
    return message.as_bytes()
