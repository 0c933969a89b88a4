"""The pieces the structured parsers share: cells as table text, Markdown tables with their header
repeated, and the block/heading builder (Sections)."""

from __future__ import annotations

import datetime as dt

import pytest

from corpus.ingest.parse import ParseError, limits
from corpus.ingest.parse.base import Heading
from corpus.ingest.parse.sections import Sections
from corpus.ingest.parse.tables import BLOCK_CHARS, CellBudget, cell_text, table_rows, table_text


@pytest.mark.parametrize(("value", "text"), [
    (None, ""), (True, "TRUE"), (False, "FALSE"), (12.0, "12"), (12.5, "12.5"), (1e20, "1e+20"), (7, "7"),
    (dt.datetime(2025, 3, 1), "2025-03-01"), (dt.datetime(2025, 3, 1, 9, 30), "2025-03-01 09:30:00"),
    (dt.date(2025, 3, 1), "2025-03-01"), (dt.time(9, 30), "09:30:00"),
    ("a | b", "a \\| b"), ("two\nlines\t here", "two lines here"), ("#DIV/0!", "#DIV/0!"),
])
def test_cell_text_is_what_a_spreadsheet_shows_on_one_line(value, text):
    assert cell_text(value) == text


@pytest.mark.parametrize(("value", "number_format", "text"), [
    (0.925, "0.0%", "92.5%"), (0.15, "0%", "15%"), (1, "0%", "100%"), (0.5, "General", "0.5"),
    (0.125, '"£"#,##0.00', "0.125"), (True, "0%", "TRUE"), ("n/a", "0%", "n/a"),
])
def test_a_percentage_cell_is_shown_as_a_percentage(value, number_format, text):
    # A budget sheet's "Spent" column formatted 0.0%: the cell holds 0.925, the sheet shows 92.5%.
    assert cell_text(value, number_format) == text


def test_table_rows_drop_empty_rows_and_columns_and_pad_short_rows():
    rows = [["", "Name", "", "Age"], ["", "", "", ""], ["", "Ada", "", "36", ""], ["", "Bob"]]

    assert table_rows(rows) == [["Name", "Age"], ["Ada", "36"], ["Bob", ""]]
    assert table_rows([["", ""], []]) == []


def test_table_text_repeats_the_header_between_blocks_of_rows():
    rows = [["Plot", "Crop"]] + [[f"P{i}", "x" * 40] for i in range(40)]

    blocks = table_text(rows).split("\n\n")

    assert len(blocks) > 1
    for block in blocks:
        assert block.startswith("| Plot | Crop |\n| --- | --- |\n")
        assert len(block) - len("| Plot | Crop |\n| --- | --- |\n") <= BLOCK_CHARS + 60
    assert table_text([["Only", "a header"]]) == "| Only | a header |\n| --- | --- |"
    assert table_text([]) == ""


def test_cell_budget_counts_cells_and_characters(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_SPREADSHEET_CELLS", 10)
    monkeypatch.setattr(limits, "MAX_DOCUMENT_CHARS", 100)
    budget = CellBudget("The sheet")
    budget.take(10, 100)

    with pytest.raises(ParseError, match="The sheet has more than 10 cells"):
        budget.take(1)
    with pytest.raises(ParseError, match="longer than 100 characters"):
        CellBudget("The sheet").take(1, 101)


def test_sections_join_blocks_record_headings_and_move_parsed_headings(settings, monkeypatch):
    sections = Sections()
    assert sections.add("Sheet: Budget", level=1)
    assert not sections.add("  \n ")
    sections.add("row\x00 one\r\nrow two")
    sections.extend("\n\nChapter\n\nText.\n", [Heading(2, 2, "Chapter")])

    assert sections.text() == "Sheet: Budget\n\nrow one\nrow two\n\nChapter\n\nText."
    assert [(h.level, h.title, sections.text()[h.start:].split("\n")[0]) for h in sections.headings] == [
        (1, "Sheet: Budget", "Sheet: Budget"), (2, "Chapter", "Chapter")]
    assert sections.title() == "Sheet: Budget"

    monkeypatch.setattr(limits, "MAX_DOCUMENT_CHARS", 10)
    with pytest.raises(ParseError, match="longer than 10 characters"):
        Sections().add("x" * 11)
