"""CSV (and TSV): one Markdown table (tables.py), the first row of more than one cell its header (a
title line above it is text: tables.title_rows).

The bytes are decoded like any text file (text.decode_text); the dialect is guessed by the csv
module's Sniffer from the first few kilobytes only (its regular expressions are slow on long
input), among the usual delimiters, falling back to commas.
"""

from __future__ import annotations

import csv
import io

from corpus.ingest.parse.base import ParseError
from corpus.ingest.parse.limits import check_text_length
from corpus.ingest.parse.tables import CellBudget, table_rows, table_text, title_rows
from corpus.ingest.parse.text import decode_text

SNIFF_CHARS = 8192
_DELIMITERS = ",;\t|"


def parse_csv(data: bytes) -> str:
    """The table's text ("" for a file of empty rows). Raises ParseError for text that is not
    readable CSV (an unclosed quote running past the field size limit, say) or over the limits."""
    text = decode_text(data)
    check_text_length(len(text))
    dialect = sniff(text)
    budget = CellBudget("The CSV file")
    rows = []
    reader = csv.reader(io.StringIO(text, newline=""), dialect)
    try:
        for row in reader:
            cells = [" ".join(cell.split()).replace("|", "\\|") for cell in row]
            budget.take(max(1, len(cells)), sum(map(len, cells)))
            if any(cells):
                rows.append(cells)
    except csv.Error as exc:
        raise ParseError(f"The CSV file could not be read (line {reader.line_num}): {exc}.") from None
    titles, rows = title_rows(rows)
    return "\n\n".join([*titles, table_text(table_rows(rows))]).strip()


def sniff(text: str) -> type[csv.Dialect] | csv.Dialect:
    """The dialect of `text`, guessed from its first SNIFF_CHARS characters (whole lines)."""
    sample = text[:SNIFF_CHARS]
    if len(text) > SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:
        return csv.excel
