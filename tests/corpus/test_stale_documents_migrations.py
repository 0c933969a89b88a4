"""corpus 0019 marks out of date the documents built when a long or multi-sentence `#` line was
still a heading, and 0020 the HTML documents (navigation by class dropped since), and only those:
their next ingest or sync rebuilds them, the others stay current."""

import importlib

import pytest
from django.apps import apps

from corpus.models import Chunk
from tests.chat.factories import make_collection, make_document

pytestmark = pytest.mark.django_db

migration = importlib.import_module("corpus.migrations.0019_stale_long_heading_documents")

PROSE = ("This whole paragraph was once written behind a hash. It has several sentences. "
         "It is not a title at all.")


def _built(collection, source, heading_path):
    document = make_document(collection, source, ["Some text. "])
    document.built_hash = document.content_hash = "h"
    document.built_signature = collection.pipeline_signature()
    document.save()
    Chunk.objects.filter(document=document).update(heading_path=heading_path)
    assert document.is_current()
    return document


def _filed(collection, source, media_type, data):
    """A current document of `media_type` whose stored file holds `data` (none when None)."""
    from django.core.files.base import ContentFile

    document = _built(collection, source, "")
    document.media_type = media_type
    if data is not None:
        document.file.save(source, ContentFile(data), save=False)
    document.save()
    return document


def test_only_documents_with_a_heading_that_is_prose_are_marked_out_of_date():
    collection = make_collection("notes")
    prose = _built(collection, "prose.md", f"Guide > {PROSE}")
    long = _built(collection, "long.md", "x" * 201)
    fine = _built(collection, "fine.md", "Guide > Version 2.0 > Install it. Then run")
    plain = _built(collection, "plain.md", "")

    migration.mark_stale(apps, None)

    for document in (prose, long, fine, plain):
        document.refresh_from_db()
    assert not prose.is_current() and not long.is_current()
    assert fine.is_current() and plain.is_current()


def test_html_documents_are_marked_out_of_date_for_the_navigation_rule():
    html_migration = importlib.import_module("corpus.migrations.0020_stale_html_documents")
    collection = make_collection("pages")
    page = _built(collection, "page.html", "")
    page.media_type = "text/html"
    page.save()
    notes = _built(collection, "notes.md", "")

    html_migration.mark_stale(apps, None)

    page.refresh_from_db()
    notes.refresh_from_db()
    assert not page.is_current() and notes.is_current()


def test_documents_the_new_parsers_read_differently_are_marked_and_queued():
    from django.core.files.base import ContentFile

    from corpus.models import Document
    from tests.fidelity import FILES

    reparsed = importlib.import_module("corpus.migrations.0023_stale_reparsed_documents")
    collection = make_collection("mixed")

    def built(source, media_type, text, data=None):
        document = _built(collection, source, "")
        document.media_type, document.text = media_type, text
        if data is not None:
            document.file.save(source, ContentFile(data), save=False)
        document.save()
        assert document.is_current()
        return document

    pypdf_text = "AAbbssttrraacctt\n\nThe reading rooms close at 6 p.m."  # memo-groff.pdf as pypdf read it
    bold_pdf = built("memo.pdf", "application/pdf", pypdf_text, b"%PDF-")
    plain_pdf = built("plain.pdf", "application/pdf", "The reading rooms close at 6 p.m.", b"%PDF-")
    scan = built("scan.png", "image/png", "depending on the distanceittravels.", b"png")
    clean_scan = built("clean.png", "image/png", "depending on the distance it travels.", b"png")
    glossary = built("guide.html", "text/html", "priority 990\ngiven to ...", (FILES / "guide.html").read_bytes())
    page = built("page.html", "text/html", "Hello", b"<p>Hello</p>")
    sheet = built("loans.csv", "text/csv", "| a |\n| --- |\n| 1 |", b"a\n1\n")
    notes = built("notes.md", "text/markdown", "# Notes", b"# Notes")
    manual = built("ferries.txt", "text/plain", "in order, inter\u2010\n       leaving the", b"x")
    letter = built("letter.txt", "text/plain", "Dear reader,\nhello", b"x")

    reparsed.mark_stale(apps, None)

    every = (bold_pdf, plain_pdf, scan, clean_scan, glossary, page, sheet, notes, manual, letter)
    for document in every:
        document.refresh_from_db()
    assert [d.source for d in every if not d.is_current()] == [
        "memo.pdf", "scan.png", "guide.html", "loans.csv", "ferries.txt"]
    assert {bold_pdf.status, scan.status, glossary.status, sheet.status} == {Document.Status.QUEUED}
    assert notes.status == page.status == Document.Status.READY


def test_html_and_word_documents_holding_a_table_are_marked_and_queued():
    import io

    import docx

    from corpus.models import Document

    tables = importlib.import_module("corpus.migrations.0027_stale_table_documents")
    collection = make_collection("tabled")

    def word(with_table: bool) -> bytes:
        document = docx.Document()
        document.add_paragraph("Stock")
        if with_table:
            document.add_table(rows=2, cols=2)
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()

    def built(source, media_type, data):
        return _filed(collection, source, media_type, data)

    docx_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    every = (built("stock.html", "text/html", b"<table><tr><th>Item</th></tr><tr><td>rake</td></tr></table>"),
             built("plain.html", "text/html", b"<table><tr><td>rake</td></tr></table>"),
             built("stock.docx", docx_type, word(True)),
             built("letter.docx", docx_type, word(False)),
             built("broken.docx", docx_type, b"PK not a zip"),
             built("stock.csv", "text/csv", b"a,b\n1,2\n"))

    tables.mark_stale(apps, None)

    for document in every:
        document.refresh_from_db()
    assert [d.source for d in every if not d.is_current()] == ["stock.html", "stock.docx"]
    assert [d.status for d in every if not d.is_current()] == [Document.Status.QUEUED] * 2


def test_plain_text_read_differently_and_documents_titled_by_their_storage_name_are_marked_and_queued(settings,
                                                                                                        tmp_path):
    from django.core.files.base import ContentFile

    from corpus.ingest.parse.text import BINARY_MESSAGE
    from corpus.models import Document

    settings.MEDIA_ROOT = tmp_path  # files stored under the names given, no earlier run's beside them
    plain = importlib.import_module("corpus.migrations.0028_stale_plain_text_documents")
    collection = make_collection("plain")

    def built(source, media_type, text, *, title, stored=None, data=b"x"):
        document = _built(collection, source, "")
        document.media_type, document.text, document.title = media_type, text, title
        document.file.save(stored or source, ContentFile(data), save=False)
        document.save()
        assert document.is_current()
        return document

    paragraph = "The relay host takes the mail of the network.\nIt keeps it until the link is up.\n"
    sectioned = built("guide.txt", "text/plain", f"{paragraph}\nRelay clients\n\n{paragraph}", title="guide")
    titled = built("readme.txt", "text/plain", f"Postfix Guide\n\n{paragraph}", title="readme")
    unchanged = built("notes.txt", "text/plain", paragraph, title="notes")
    suffixed = built("setup.txt", "text/plain", paragraph, title="setup_4wEfB12", stored="setup_4wEfB12.txt")
    spaced = built("My notes.md", "text/markdown", "no heading", title="My_notes", stored="My_notes.md")
    stated = built("report.md", "text/markdown", "# Report", title="Report")
    struck = built("bold.md", "text/markdown", "B\x08Bold", title="bold")
    refused = built("POSTFIX_README", "text/plain", "", title="POSTFIX_README", data=b"P\x08Po\x08ostfix")
    refused.status, refused.error = Document.Status.FAILED, BINARY_MESSAGE
    refused.save()
    underlined = built("README.txt", "text/x-rst", "Guide\n=====\n\nText.\n", title="Guide")
    django = built("forms.txt", "text/x-rst", "Forms\n=====\n\n.. note:: Text.\n", title="Forms")
    junk = built("junk.txt", "text/plain", "", title="junk", data=b"\x01\x02\x03")
    junk.status, junk.error = Document.Status.FAILED, BINARY_MESSAGE
    junk.save()

    plain.mark_stale(apps, None)

    every = (sectioned, titled, unchanged, suffixed, spaced, stated, struck, refused, underlined, django, junk)
    for document in every:
        document.refresh_from_db()
    assert [d.source for d in every if d.status == Document.Status.QUEUED] == [
        "guide.txt", "readme.txt", "setup.txt", "My notes.md", "bold.md", "POSTFIX_README", "README.txt"]
    assert unchanged.is_current() and stated.is_current() and django.is_current()
    assert junk.status == Document.Status.FAILED


def test_word_and_opendocument_documents_holding_a_list_are_marked_and_queued():
    import io

    import docx

    from corpus.models import Document
    from tests import formats

    lists = importlib.import_module("corpus.migrations.0029_stale_list_documents")
    collection = make_collection("listed")

    def word(style: str | None) -> bytes:
        document = docx.Document()  # its styles.xml numbers "List Bullet", used or not
        document.add_paragraph("Stock")
        document.add_paragraph("rakes", style=style)
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()

    def built(source, media_type, data):
        return _filed(collection, source, media_type, data)

    docx_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    odt_type = "application/vnd.oasis.opendocument.text"
    every = (built("bullets.docx", docx_type, word("List Bullet")),
             built("letter.docx", docx_type, word(None)),
             built("broken.docx", docx_type, b"PK not a zip"),
             built("log.odt", odt_type, formats.odt()),  # holds a list
             built("notes.md", "text/markdown", b"- a list\n- of Markdown"))

    lists.mark_stale(apps, None)

    for document in every:
        document.refresh_from_db()
    assert [d.source for d in every if not d.is_current()] == ["bullets.docx", "log.odt"]
    assert [d.status for d in every if not d.is_current()] == [Document.Status.QUEUED] * 2


def test_documents_with_a_chunk_starting_inside_a_code_fence_are_marked_and_queued():
    from corpus.models import Document

    fenced = importlib.import_module("corpus.migrations.0030_stale_fenced_documents")
    collection = make_collection("fenced")

    def built(source, chunks):
        document = make_document(collection, source, chunks)
        document.built_hash = document.content_hash = "h"
        document.built_signature = collection.pipeline_signature()
        document.save()
        return document

    cut = built("cut.md", ["Intro.\n\n```text\nline 1\n\n", "line 2\n```\n\nSummary.\n"])
    whole = built("whole.md", ["Intro.\n\n", "```text\nline 1\n\nline 2\n```\n\nSummary.\n"])
    prose = built("prose.md", ["No code here.\n\n", "None at all.\n"])

    fenced.mark_stale(apps, None)

    for document in (cut, whole, prose):
        document.refresh_from_db()
    assert [d.source for d in (cut, whole, prose) if not d.is_current()] == ["cut.md"]
    assert cut.status == Document.Status.QUEUED and whole.status == Document.Status.READY


def test_markdown_documents_with_reference_links_or_marked_up_headings_are_marked_and_queued():
    from corpus.models import Document

    markdown = importlib.import_module("corpus.migrations.0031_stale_markdown_documents")
    collection = make_collection("markdown")

    def built(source, chunks, heading_path="Guide"):
        document = _built(collection, source, heading_path)
        document.media_type = "text/markdown"
        document.text = "".join(chunks)
        document.save()
        return document

    linked = built("linked.md", ["Inside a [Worker Thread][wt].\n\n[wt]: https://nodejs.org/wt\n"])
    undefined = built("undefined.md", ["Inside a [Worker Thread][wt], defined nowhere; [x]: y is text.\n"])
    coded = built("coded.md", ["Options.\n"], heading_path="Options > `asObject` (Boolean)")
    plain = built("plain.md", ["No links.\n"], heading_path="Options > asObject (Boolean)")

    markdown.mark_stale(apps, None)

    every = (linked, undefined, coded, plain)
    for document in every:
        document.refresh_from_db()
    assert [d.source for d in every if not d.is_current()] == ["linked.md", "coded.md"]
    assert linked.status == coded.status == Document.Status.QUEUED


def test_html_documents_holding_a_list_are_marked_and_those_with_a_file_queued():

    from corpus.models import Document

    lists = importlib.import_module("corpus.migrations.0032_stale_html_list_documents")
    collection = make_collection("html-lists")

    def built(source, data, media_type="text/html"):
        return _filed(collection, source, media_type, data)

    listed = built("steps.html", b"<html><body><ol><LI>Install.</li></ol></body></html>")
    prose = built("prose.html", b"<html><body><p>A <link> to <lib>.</p></body></html>")
    fetched = built("page.html", None)  # a source's page: no stored file
    markdown = built("notes.md", b"- <li> in Markdown", media_type="text/markdown")

    lists.mark_stale(apps, None)

    every = (listed, prose, fetched, markdown)
    for document in every:
        document.refresh_from_db()
    assert [d.source for d in every if not d.is_current()] == ["steps.html", "page.html"]
    assert listed.status == Document.Status.QUEUED and fetched.status == Document.Status.READY


def test_word_and_opendocument_documents_holding_a_code_paragraph_are_marked_and_queued():
    import io

    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from odf.opendocument import OpenDocumentText
    from odf.style import Style
    from odf.text import P

    from corpus.models import Document

    code = importlib.import_module("corpus.migrations.0033_stale_code_style_documents")
    collection = make_collection("coded")
    docx_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

    def word(style: str | None, *, defined: bool = True) -> bytes:
        document = docx.Document()
        if defined:
            document.styles.add_style("Source Code", WD_STYLE_TYPE.PARAGRAPH)
        document.add_paragraph("relayhost = $mydomain", style=style)
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()

    def built(source, data, media_type=docx_type):
        return _filed(collection, source, media_type, data)

    def opendocument(coded: bool) -> bytes:
        document = OpenDocumentText()
        style = Style(name="Preformatted_20_Text", displayname="Preformatted Text", family="paragraph")
        document.styles.addElement(style)  # LibreOffice's styles.xml defines it, used or not
        document.text.addElement(P(stylename=style, text="relayhost = $mydomain") if coded else P(text="Stock"))
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()

    odt_type = "application/vnd.oasis.opendocument.text"
    every = (built("coded.docx", word("Source Code")),
             built("styled-unused.docx", word(None)),  # the style defined, no paragraph in it
             built("plain.docx", word(None, defined=False)),
             built("broken.docx", b"PK not a zip"),
             built("coded.odt", opendocument(True), media_type=odt_type),
             built("plain.odt", opendocument(False), media_type=odt_type),
             built("notes.md", b"    relayhost = $mydomain", media_type="text/markdown"))

    code.mark_stale(apps, None)

    for document in every:
        document.refresh_from_db()
    assert [d.source for d in every if not d.is_current()] == ["coded.docx", "coded.odt"]
    assert {d.status for d in every if not d.is_current()} == {Document.Status.QUEUED}
