"""Text drawn twice at one place (fake bold, shadows) is read once: real PDFs printed by groff,
Chromium and LibreOffice (the fidelity suite's files)."""

from corpus.ingest.parse.pdf_overdrawn import doubled_word, overdrawn
from tests.fidelity import parse_fidelity


def test_it_reads_troff_artificial_bold_once():
    text = parse_fidelity("memo-groff.pdf").text  # ".bd R 3": every glyph of "Abstract" overstruck
    assert "AAbbss" not in text
    assert text.split("\n\n")[1] == "Abstract"
    assert "The reading rooms close at 6 p.m. on Sat. and Sun. during the winter months." in text


def test_it_reads_a_chromium_shadowed_heading_once():
    text = parse_fidelity("guide-chromium.pdf").text  # CSS text-shadow on h1 and h2
    assert text.startswith("Harbour Library lending guide\n\nAbstract\n")
    assert text.count("Harbour Library lending guide") == 1
    assert text.count("Borrowing limits") == 1
    assert "<implementations-keywords>" in text


def test_it_reads_a_libreoffice_shadowed_title_once():
    text = parse_fidelity("notice-libreoffice.pdf").text  # a character shadow on the title
    assert text.startswith("Ferry timetable notice\n\nAbstract\n")
    assert text.count("Ferry timetable notice") == 1


def test_the_marks_of_a_second_drawing():
    assert doubled_word("AAbbssttrraacctt") and doubled_word("..AAbb")
    assert not doubled_word("bookkeeper") and not doubled_word("------") and not doubled_word("aabb")
    assert overdrawn("Ferry timetable noticeFerry timetable notice\nAbstract")
    assert overdrawn("Title Title")
    assert not overdrawn("A plain page\nwith two lines")
