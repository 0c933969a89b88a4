"""The fidelity suite's real documents (chat/evaluation/data/fidelity: made by its make_files.sh with
Chromium, LibreOffice, groff and man), for the tests of what each parser and splitter reads in them."""

from __future__ import annotations

from pathlib import Path

from corpus.ingest.parse import ParsedDocument, parse_document

FIDELITY = Path(__file__).resolve().parents[1] / "chat" / "evaluation" / "data" / "fidelity"
FILES = FIDELITY / "files"


def parse_fidelity(name: str) -> ParsedDocument:
    return parse_document((FILES / name).read_bytes(), filename=name)
