"""Parsers on real sample files (tests/fixtures/files, made by generate.py there), broken ones included."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from corpus.ingest.parse import ParseError, detect_media_type, parse_document
from corpus.ingest.parse.detect import DOCX, HTML, MARKDOWN, PDF, RST, TEXT, ZIP

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "files"


def parse(name: str, **kwargs):
    return parse_document((FILES / name).read_bytes(), filename=name, **kwargs)


def parse_error(name: str, **kwargs) -> str:
    with pytest.raises(ParseError) as caught:
        parse(name, **kwargs)
    return str(caught.value)


def heading_lines(document) -> list[tuple[int, str, str]]:
    """(level, title, first line of text at the heading's offset)."""
    return [(h.level, h.title, document.text[h.start:].split("\n", 1)[0]) for h in document.headings]


# --- plain text and encodings ---

def test_plain_text_is_kept_and_titled_by_its_title_line():
    document = parse("plain.txt")  # "Plain notes", a blank line, a paragraph
    assert document.media_type == TEXT
    assert document.text == (FILES / "plain.txt").read_text()
    assert document.title == "Plain notes"
    assert heading_lines(document) == [(1, "Plain notes", "Plain notes")] and document.pages == []
    # Without a title line the file's name titles it (tests/corpus/ingest/test_parse_plain_text.py).


def test_utf8_bom_is_dropped_and_newlines_normalised():
    document = parse("bom_crlf.txt")
    assert document.text == "Café menu\nSoup\nBread\n"


def test_utf16_with_bom_is_decoded():
    assert parse("utf16.txt").text == "Grüße aus Köln\n日本語\n"


def test_latin1_text_is_read_as_windows_1252():
    assert parse("latin1.txt").text == "Café naïve Größe\n"


def test_undecodable_text_is_refused_not_mangled():
    assert parse_error("not_utf8.txt") == (
        "The file is not UTF-8 text and its character encoding could not be recognised. "
        "Save it as UTF-8 and upload it again.")


def test_invalid_utf16_after_bom_is_refused():
    data = b"\xff\xfe" + "ok".encode("utf-16-le") + b"\x00\xd8"  # a lone high surrogate
    with pytest.raises(ParseError, match="UTF-16 byte-order mark but is not valid UTF-16"):
        parse_document(data, filename="x.txt")


def test_empty_file_is_refused():
    assert parse_error("empty.txt") == "The file is empty."


def test_whitespace_only_file_has_no_text():
    assert parse_error("whitespace.txt") == "The file contains no text."


def test_binary_junk_named_txt_is_refused_as_binary():
    assert "looks like binary data" in parse_error("junk.txt")


def test_binary_junk_with_unknown_extension_is_unsupported():
    assert detect_media_type("junk.bin", (FILES / "junk.bin").read_bytes()) == "application/octet-stream"
    assert parse_error("junk.bin").startswith("This file type (.bin) is not supported")


def test_file_over_the_limit_is_refused_before_parsing():
    message = parse_error("plain.txt", max_bytes=50)
    assert message == "The file is 94 bytes, over the 50 bytes limit."
    with pytest.raises(ParseError, match=r"The file is 2 MB, over the 1 MB limit\."):
        parse_document(b"a" * (2 * 1024 * 1024), filename="big.txt", max_bytes=1024 * 1024)


def test_default_limit_comes_from_settings(settings):
    settings.MAX_UPLOAD_BYTES = 10
    with pytest.raises(ParseError, match="over the 10 bytes limit"):
        parse("plain.txt")


def test_unknown_text_extension_is_plain_text():
    document = parse_document(b"name,value\na,1\n", filename="table.log")
    assert (document.media_type, document.text) == (TEXT, "name,value\na,1\n")


# --- Markdown ---

def test_markdown_keeps_source_and_finds_atx_and_setext_headings():
    document = parse("guide.md")
    assert document.media_type == MARKDOWN
    assert document.text == (FILES / "guide.md").read_text()
    assert heading_lines(document) == [
        (1, "Birds of the Coast", "# Birds of the Coast"),
        (2, "Shore birds", "Shore birds"),
        (2, "Waders", "## Waders ##"),
        (1, "Paragraph line one and line two", "Paragraph line one"),
        (3, "Deep section", "### Deep section"),
    ]


def test_markdown_title_comes_from_front_matter():
    assert parse("guide.md").title == "Field Guide"


def test_markdown_title_falls_back_to_first_h1_then_stem():
    assert parse_document(b"intro\n\n# Main title\n", filename="a.md").title == "Main title"
    assert parse_document(b"## Only a subsection\n", filename="notes.md").title == "notes"


LONG_HASH_LINE = ("# " + "The request timeout is thirty seconds by default and applies to every outgoing call "
                  "that the client makes. " * 3).rstrip()


def test_a_long_or_several_sentence_hash_line_is_text_not_a_heading():
    text = f"# Setup\n\n{LONG_HASH_LINE}\n\n# Run it. Then stop it. Then start again.\n\n## Short one. Fine\n"
    document = parse_document(text.encode(), filename="notes.md")
    assert [h.title for h in document.headings] == ["Setup", "Short one. Fine"]
    alone = parse_document(LONG_HASH_LINE.encode(), filename="one-line.md")
    assert alone.headings == [] and alone.title == "one-line"  # no 250-character title either


def test_markdown_ignores_headings_in_fenced_code():
    text = "~~~~\n# not\n~~~\nstill code\n~~~~\n# Real\n"
    document = parse_document(text.encode(), filename="f.md")
    assert [(h.start, h.title) for h in document.headings] == [(text.index("# Real"), "Real")]


# --- reStructuredText ---

def test_rst_headings_levels_by_first_appearance():
    document = parse("guide.rst")
    assert document.media_type == RST
    assert document.text == (FILES / "guide.rst").read_text()
    assert heading_lines(document) == [
        (1, "Field guide (reST)", "=================="),
        (2, "Introduction", "Introduction"),
        (3, "Shore birds", "Shore birds"),
        (3, "Herons", "Herons"),
        (2, "Appendix", "Appendix"),
    ]
    assert document.title == "Field guide (reST)"


def test_rst_headings_match_docutils_sections():
    from docutils.core import publish_doctree
    from docutils.nodes import section, title

    source = (FILES / "guide.rst").read_text()
    tree = publish_doctree(source, settings_overrides={"doctitle_xform": False, "report_level": 5})

    def depth(node) -> int:
        level = 0
        while node is not None:
            level += isinstance(node, section)
            node = node.parent
        return level

    expected = [(depth(node), node[0].astext()) for node in tree.findall(section) if isinstance(node[0], title)]
    assert [(h.level, h.title) for h in parse("guide.rst").headings] == expected


def test_rst_label_targets_belong_to_the_following_section():
    text = "Intro\n=====\n\nText.\n\n.. _usage-label:\n\n.. _other-label:\n\nUsage\n=====\n\nMore.\n"
    document = parse_document(text.encode(), filename="a.rst")
    assert [(h.start, h.title) for h in document.headings] == [(0, "Intro"), (text.index(".. _usage"), "Usage")]


def test_txt_written_in_rst_is_detected_as_rst():
    data = (FILES / "guide_rst.txt").read_bytes()
    assert detect_media_type("guide_rst.txt", data) == RST
    assert parse("guide_rst.txt", media_type="text/plain").media_type == RST
    assert detect_media_type("plain.txt", (FILES / "plain.txt").read_bytes()) == TEXT


def test_txt_with_underlined_titles_but_no_rst_markup_is_plain_text_with_all_its_headings():
    # Debian's READMEs underline some titles and set others alone on their line; none writes reST markup.
    text = ("adduser in Debian\n=================\n\nThis package installs adduser and deluser.\n\n"
            "Documentation\n\nSee the manual pages for the options they take.\n\n"
            "Configuration files\n-------------------\n\nThe defaults live in /etc/adduser.conf.\n")
    document = parse_document(text.encode(), filename="README.txt", media_type="text/plain")
    assert document.media_type == TEXT
    assert [(h.level, h.title) for h in document.headings] == [
        (1, "adduser in Debian"), (3, "Documentation"), (2, "Configuration files")]  # bare lines below underlines
    assert document.title == "adduser in Debian"


# --- HTML ---

def test_html_text_is_visible_text_only():
    document = parse("page.html")
    assert document.media_type == HTML
    for hidden in ("secretScript", "inline secret", "color: red", "SiteBanner", "NavLink", "AsideText",
                   "FooterText", "Enable JavaScript", "TemplateText", "HiddenText"):
        assert hidden not in document.text
    assert document.text == (
        "Birds of the Coast\n\n"
        "Gulls and terns live here.\nThey eat fish.\n\n"
        "Shore birds\n\n"
        "Plovers run along the sand.\n\n"
        "| Bird | Length |\n| --- | --- |\n| Plover | 18 cm |\n\n"
        "code   keeps\n  its spacing")


def test_html_list_items_read_as_markdown_items_numbered_and_nested():
    from chat.answering.blocks import ITEM, parse_blocks

    html = (b"<html><body><h1>Setup</h1><p>Steps:</p><ol start='2'><li>Install <b>it</b>.</li>"
            b"<li><p>Configure the two files.</p><ul><li>main.cf</li><li>master.cf</li></ul></li></ol>"
            b"<ul><li></li></ul><p>Done.</p></body></html>")
    document = parse_document(html, filename="setup.html", media_type="text/html")
    assert document.text == ("Setup\n\nSteps:\n\n2. Install it.\n\n3. Configure the two files.\n\n"
                             "    - main.cf\n    - master.cf\n\nDone.")  # an empty item writes nothing
    items = [b.text for b in parse_blocks(document.text) if b.kind == ITEM]
    assert items == ["Install it.", "Configure the two files.", "main.cf", "master.cf"]


def test_each_html_ordered_list_counts_its_own_items_in_one_pass():
    html = (b"<ol><li>a</li><li>b</li></ol><p>x</p><ol start='5'><li>c</li></ol><ol><li>d</li></ol>"
            b"<ol>" + b"".join(b"<li>n</li>" for _ in range(20000)) + b"</ol>")
    text = parse_document(html, filename="lists.html", media_type="text/html").text
    assert text.startswith("1. a\n2. b\n\nx\n\n5. c\n\n1. d\n\n1. n\n")
    assert text.endswith("20000. n")


def test_an_html_data_table_is_a_markdown_table_under_its_header():
    # Its first row is header cells: a Markdown table as a spreadsheet's is, so a row quoted alone says
    # what its cells mean (chat.answering.blocks); its caption a paragraph before it.
    html = (b"<html><body><p>Stock.</p><table><caption>Where things are</caption>"
            b"<thead><tr><th>Item</th><th>Location</th></tr></thead><tbody>"
            b"<tr><td>ladders</td><td>garage<br>north wall</td></tr><tr><td>a|b</td><td>shed</td></tr>"
            b"</tbody></table><p>After.</p></body></html>")
    assert parse_document(html, filename="p.html").text == (
        "Stock.\n\nWhere things are\n\n"
        "| Item | Location |\n| --- | --- |\n| ladders | garage north wall |\n| a\\|b | shed |\n\nAfter.")


def test_a_cell_spanning_rows_or_columns_fills_each_row_and_column_it_spans():
    # A rota whose week spans two rows: the second row's team stays under "Team", not under "Week",
    # and a row read alone still names its week.
    html = (b"<html><body><table><tr><th>Week</th><th>Team</th><th>Notes</th></tr>"
            b"<tr><td rowspan='2'>15 March</td><td>Marketing</td><td>Morning</td></tr>"
            b"<tr><td>Sales</td><td>Afternoon</td></tr>"
            b"<tr><td>22 March</td><td colspan='2'>Office closed</td></tr>"
            b"<tr><td rowspan='x'>29 March</td><td>Legal</td><td>Bring gloves</td></tr></table></body></html>")
    assert parse_document(html, filename="rota.html").text == (
        "| Week | Team | Notes |\n| --- | --- | --- |\n| 15 March | Marketing | Morning |\n"
        "| 15 March | Sales | Afternoon |\n| 22 March | Office closed | Office closed |\n"
        "| 29 March | Legal | Bring gloves |")


def test_cells_spanning_past_the_cell_limit_are_refused():
    # colspan="1000" on each of 600 rows would fill 600,000 places from 1,200 cells.
    rows = b"".join(b"<tr><td colspan='1000'>x</td></tr>" for _ in range(600))
    with pytest.raises(ParseError, match="more than 500,000 cells"):
        parse_document(b"<html><body><table><tr><th>A</th><th>B</th></tr>" + rows + b"</table></body></html>",
                       filename="wide.html")


def test_an_html_table_without_a_header_row_or_holding_a_table_is_lines_of_cells():
    plain = (b"<html><body><table><tr><td>query</td><td>dump the inputs</td></tr>"
             b"<tr><td>browse</td><td>a graph</td></tr></table></body></html>")
    assert parse_document(plain, filename="p.html").text == "query | dump the inputs\nbrowse | a graph"
    layout = (b"<html><body><table><tr><th>Menu</th><th>Page</th></tr><tr><td>Home</td><td>"
              b"<table><tr><td>inner</td></tr></table></td></tr></table></body></html>")
    assert "| ---" not in parse_document(layout, filename="p.html").text


def test_html_headings_are_lines_with_offsets_and_title_from_title_tag():
    document = parse("page.html")
    assert heading_lines(document) == [(1, "Birds of the Coast", "Birds of the Coast"),
                                       (2, "Shore birds", "Shore birds")]
    assert document.title == "Coastal Birds & Friends"


def test_html_title_falls_back_to_first_h1():
    html = b"<html><body><h2>Sub</h2><h1>Main</h1><p>x</p></body></html>"
    assert parse_document(html, filename="p.html").title == "Main"


def test_html_article_header_is_kept_but_page_header_dropped():
    html = (b"<html><body><header>Site</header><article><header><h1>Post</h1></header>"
            b"<p>Body</p></article></body></html>")
    assert parse_document(html, filename="p.html").text == "Post\n\nBody"


def test_html_navigation_without_nav_tags_is_dropped():
    # Texinfo's panel (GNU time's manual: "Next: ..., Up: ... [Contents][Index]" before each section),
    # breadcrumbs and menus marked by class; a page header holding the title stays.
    html = (b'<html><body><div class="header"><h1>GNU time</h1></div>'
            b'<div class="header"><p>Next: <a href="#b" rel="next">Format</a>, Up: <a href="#t" rel="up">Time</a>'
            b' [<a href="#c" rel="contents">Contents</a>]</p></div>'
            b'<ol class="breadcrumb"><li><a href="/">Home</a></li><li>Manuals</li></ol>'
            b'<ul class="menu"><li><a href="#x">Examples</a></li></ul>'
            b'<nav>Site map</nav><header>Banner</header>'
            b'<h2>Setting the Output Format</h2><p>-f FORMAT sets the format.</p>'
            b'<div class="nav-panel"><p>Previous: <a href="#a" rel="prev">Intro</a></p></div>'
            b'<footer>Copyright</footer></body></html>')
    document = parse_document(html, filename="time.html")
    assert document.text == "GNU time\n\nSetting the Output Format\n\n-f FORMAT sets the format."


def test_html_meta_charset_is_honoured():
    html = '<html><head><meta charset="iso-8859-1"></head><body><p>Café</p></body></html>'.encode("latin-1")
    assert parse_document(html, filename="p.htm").text == "Café"


def test_html_without_visible_text_is_refused():
    with pytest.raises(ParseError, match="no visible text"):
        parse_document(b"<html><head><script>x()</script></head><body> </body></html>", filename="p.html")


# --- PDF ---

def test_pdf_text_and_page_offsets():
    document = parse("two_pages.pdf")
    assert document.media_type == PDF
    assert document.text == "Page one says hello.\nSecond line on page one.\n\nPage two says goodbye."
    assert document.pages == [0, document.text.index("Page two")]
    assert document.title == "Two Page Report"


def test_pdf_is_recognised_by_content_whatever_its_name():
    data = (FILES / "two_pages.pdf").read_bytes()
    assert detect_media_type("upload.bin", data) == PDF
    assert parse_document(data, filename="upload", media_type="text/plain").media_type == PDF


def test_text_mentioning_the_pdf_header_is_not_a_pdf():
    data = b"# Notes\n\nEvery PDF starts with %PDF-1.7 in its first line.\n"
    assert detect_media_type("notes.md", data) == MARKDOWN


def test_pdf_without_text_layer_or_scanned_image_is_refused():
    # A page of drawing only: nothing for the text layer or for OCR.
    assert parse_error("scanned.pdf") == ("The PDF has no extractable text: its pages hold no text layer, and no "
                                          "scanned image in which OCR found text.")


def test_truncated_pdf_is_refused():
    assert parse_error("truncated.pdf") == "The PDF file is damaged or incomplete and could not be read."


def test_encrypted_pdf_is_refused():
    assert parse_error("encrypted.pdf") == "The PDF is password-protected or encrypted; upload an unprotected copy."


def test_pdf_name_without_pdf_content_is_damaged():
    with pytest.raises(ParseError, match="damaged or incomplete"):
        parse_document(b"just some text", filename="fake.pdf")


# --- DOCX ---

def test_docx_paragraphs_tables_and_heading_styles():
    document = parse("report.docx")
    assert document.media_type == DOCX
    assert document.text == ("Annual Report\n\nIntroduction\n\nThis report covers the year.\n\nFigures\n\n"
                             "| Quarter | Revenue |\n| --- | --- |\n| Q1 | 100 |\n\nOutlook\n\nNext year looks better.")
    assert heading_lines(document) == [(0, "Annual Report", "Annual Report"), (1, "Introduction", "Introduction"),
                                       (2, "Figures", "Figures"), (1, "Outlook", "Outlook")]
    assert document.title == "Annual Report"


def test_docx_merged_cells_keep_the_next_cells_under_their_header_and_a_one_row_table_is_its_text():
    import docx

    document = docx.Document()
    table = document.add_table(rows=3, cols=3)
    for row, cells in zip(table.rows, [("Tool", "Shelf", "Count"), ("rake", "", "2"), ("hoe", "B", "1")], strict=True):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    table.cell(1, 0).merge(table.cell(1, 1))  # "rake" spans Tool and Shelf
    table.cell(1, 0).text = "rake"
    box = document.add_table(rows=1, cols=2)
    box.cell(0, 0).text, box.cell(0, 1).text = "Note", "keep dry"
    out = io.BytesIO()
    document.save(out)
    assert parse_document(out.getvalue(), filename="tools.docx").text == (
        "| Tool | Shelf | Count |\n| --- | --- | --- |\n| rake |  | 2 |\n| hoe | B | 1 |\n\nNote | keep dry")


def _docx_bytes(document) -> bytes:
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_docx_list_paragraphs_are_markdown_list_items_bulleted_numbered_and_nested():
    import docx

    from chat.answering.blocks import ITEM, parse_blocks

    document = docx.Document()
    document.add_paragraph("This document presents:")
    for text in ("Postfix on a stand-alone Internet host", "Postfix on a null client"):
        document.add_paragraph(text, style="List Bullet")
    document.add_paragraph("relay domains", style="List Bullet 2")  # one level down
    document.add_paragraph("Steps:")
    document.add_paragraph("Stop Postfix.", style="List Number")
    document.add_paragraph("Edit main.cf\nand save it.", style="List Number")
    document.add_paragraph("Start it again.", style="List Number")
    document.add_paragraph("Done.")
    text = parse_document(_docx_bytes(document), filename="guide.docx").text

    assert text == ("This document presents:\n\n- Postfix on a stand-alone Internet host\n- Postfix on a null client\n"
                    "    - relay domains\n\nSteps:\n\n1. Stop Postfix.\n2. Edit main.cf\n   and save it.\n"
                    "3. Start it again.\n\nDone.")
    items = [block.text for block in parse_blocks(text) if block.kind == ITEM]
    assert items[:2] == ["Postfix on a stand-alone Internet host", "Postfix on a null client"]
    assert "Edit main.cf and save it." in items


def test_docx_code_paragraphs_are_one_fenced_block_never_quoted_as_sentences():
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    from chat.answering.blocks import CODE, PARAGRAPH, parse_blocks

    document = docx.Document()
    document.styles.add_style("Source Code", WD_STYLE_TYPE.PARAGRAPH)
    document.add_paragraph("Set the host name:")
    document.add_paragraph("/etc/postfix/main.cf:\n    myhostname = host.example.com", style="Source Code")
    document.add_paragraph("    relayhost = $mydomain", style="Source Code")  # a run of them: one block
    document.add_paragraph("Then reload Postfix.")
    document.add_paragraph("echo ```quoted```", style="Source Code")
    text = parse_document(_docx_bytes(document), filename="guide.docx").text

    assert text == ("Set the host name:\n\n```\n/etc/postfix/main.cf:\n    myhostname = host.example.com\n"
                    "    relayhost = $mydomain\n```\n\nThen reload Postfix.\n\n````\necho ```quoted```\n````")
    blocks = parse_blocks(text)
    assert [b.kind for b in blocks] == [PARAGRAPH, CODE, PARAGRAPH, CODE]
    assert blocks[1].text.splitlines()[-1] == "    relayhost = $mydomain"


def test_odt_paragraphs_in_a_code_style_or_one_derived_from_it_are_one_fenced_block():
    from odf.opendocument import OpenDocumentText
    from odf.style import Style
    from odf.text import P, S

    from chat.answering.blocks import CODE, PARAGRAPH, parse_blocks

    document = OpenDocumentText()
    code = Style(name="Preformatted_20_Text", displayname="Preformatted Text", family="paragraph")
    document.styles.addElement(code)
    by_hand = Style(name="P1", family="paragraph", parentstylename="Preformatted_20_Text")  # bold, say
    document.automaticstyles.addElement(by_hand)
    document.text.addElement(P(text="Set the host name:"))
    document.text.addElement(P(stylename=code, text="/etc/postfix/main.cf:"))
    indented = P(stylename=by_hand)
    indented.addElement(S(c=4))
    indented.addText("myhostname = host.example.com")
    document.text.addElement(indented)
    document.text.addElement(P(text="Then reload Postfix."))
    out = io.BytesIO()
    document.save(out)
    text = parse_document(out.getvalue(), filename="guide.odt").text

    assert text == ("Set the host name:\n\n```\n/etc/postfix/main.cf:\n    myhostname = host.example.com\n```\n\n"
                    "Then reload Postfix.")
    assert [b.kind for b in parse_blocks(text)] == [PARAGRAPH, CODE, PARAGRAPH]


def test_docx_numbering_of_its_own_levels_a_blank_bullet_and_numbering_switched_off():
    # As pandoc writes lists: w:numPr on the paragraph, w:ilvl for the level, and a level whose bullet is
    # blank for an item's further paragraphs; numId 0 switches a list style's numbering off.
    import docx
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    document = docx.Document()
    numbering = document.part.numbering_part.element
    numbering.append(parse_xml(
        f'<w:abstractNum {nsdecls("w")} w:abstractNumId="90">'
        '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>'
        '<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="%2)"/></w:lvl>'
        '</w:abstractNum>'))
    numbering.append(parse_xml(
        f'<w:abstractNum {nsdecls("w")} w:abstractNumId="91">'
        '<w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val=" "/></w:lvl></w:abstractNum>'))
    numbering.append(parse_xml(f'<w:num {nsdecls("w")} w:numId="900"><w:abstractNumId w:val="90"/></w:num>'))
    numbering.append(parse_xml(f'<w:num {nsdecls("w")} w:numId="901"><w:abstractNumId w:val="91"/></w:num>'))

    def numbered(text: str, num_id: int, level: int = 0, style: str | None = None) -> None:
        paragraph = document.add_paragraph(text, style=style)
        paragraph._p.get_or_add_pPr().append(parse_xml(
            f'<w:numPr {nsdecls("w")}><w:ilvl w:val="{level}"/><w:numId w:val="{num_id}"/></w:numPr>'))

    numbered("Disable spontaneous delivery.", 900)
    numbered("Normally, Postfix delivers at its convenience.", 901)
    numbered("Disable DNS lookups.", 900)
    numbered("on a dialup LAN", 900, level=1)
    numbered("on a null client", 900, level=1)
    numbered("Flush the queue.", 900)
    numbered("on a dialup LAN again", 900, level=1)  # a level below restarts under each item above it
    numbered("Not a list item any more.", 0, style="List Bullet")
    text = parse_document(_docx_bytes(document), filename="dialup.docx").text

    assert text == ("1. Disable spontaneous delivery.\n\nNormally, Postfix delivers at its convenience.\n\n"
                    "2. Disable DNS lookups.\n    a. on a dialup LAN\n    b. on a null client\n3. Flush the queue.\n"
                    "    a. on a dialup LAN again\n\nNot a list item any more.")


def test_docx_is_recognised_by_content():
    assert detect_media_type("report", (FILES / "report.docx").read_bytes()) == DOCX


def test_broken_docx_is_refused():
    assert parse_error("broken.docx") == "The Word file is damaged or is not a .docx document and could not be read."


def test_zip_that_is_not_docx_is_refused():
    assert detect_media_type("archive.zip", (FILES / "archive.zip").read_bytes()) == ZIP
    assert parse_error("archive.zip").startswith("The file is a ZIP archive, not a document we read")


def test_zip_named_docx_without_document_is_damaged():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("notes.txt", "hi")
    with pytest.raises(ParseError, match="Word file is damaged"):
        parse_document(out.getvalue(), filename="x.docx")


def test_each_definition_list_entry_is_a_paragraph_of_its_own():
    from chat.answering.extractive import split_sentences
    from tests.fidelity import parse_fidelity

    text = parse_fidelity("guide.html").text
    assert ("\n\npriority 990\ngiven to requests from members who have waited longer than two weeks.\n\n"
            "priority 500\ngiven to every other request for a reading room.\n\n") in text
    assert "priority 990 given to requests from members who have waited longer than two weeks." in split_sentences(text)


def test_words_man_hyphenated_across_lines_are_whole_again():
    from tests.fidelity import FILES as FIDELITY_FILES
    from tests.fidelity import parse_fidelity

    text = parse_fidelity("ferries-man.txt").text  # `man` output: "inter‐\n       leaving"
    assert "\u2010" not in text
    assert "in chronological order, interleaving\n" in text
    assert text.count("\n") == (FIDELITY_FILES / "ferries-man.txt").read_text().count("\n")


def test_a_first_row_of_bold_cells_heads_a_data_table():
    # Older editors write a header as <td><b>...</b></td>; one bold cell alone (a layout box's title) does not.
    html = (b"<html><body><table><tr><td><b>Office</b></td><td><strong>Reception hours</strong></td></tr>"
            b"<tr><td>Leeds</td><td>8:00-17:00</td></tr><tr><td>Bristol</td><td>9:00-18:00</td></tr></table>"
            b"<table><tr><td><b>Note</b></td></tr><tr><td>Bring a badge.</td></tr></table>"
            b"<table><tr><td><b>Office</b> and more</td><td><b>Hours</b></td></tr>"
            b"<tr><td>Leeds</td><td>8-5</td></tr></table></body></html>")
    assert parse_document(html, filename="offices.html").text == (
        "| Office | Reception hours |\n| --- | --- |\n| Leeds | 8:00-17:00 |\n| Bristol | 9:00-18:00 |\n\n"
        "Note\nBring a badge.\n\nOffice and more | Hours\nLeeds | 8-5")
