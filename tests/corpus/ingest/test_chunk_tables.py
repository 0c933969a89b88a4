"""A spreadsheet's rows stay under their header when chunked (corpus.ingest.chunk_tables): on the
fidelity suite's LibreOffice workbook."""

import numpy as np
import pytest

from corpus.ingest.chunk import ChunkingConfig, chunk_text
from corpus.ingest.chunk_tables import cuts_outside_tables, table_blocks
from tests.fidelity import parse_fidelity

HEADER = "| Member | Book | Borrowed | Due | Renewals |"


def _embed(texts: list[str]) -> np.ndarray:
    vectors = np.random.default_rng(len(texts)).standard_normal((len(texts), 8))
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.parametrize("strategy", ["semantic", "maxmin", "semantic_percentile"])
@pytest.mark.parametrize("size", [60, 100])
def test_no_chunk_of_a_sheet_starts_inside_a_row(strategy, size):
    text = parse_fidelity("loans-libreoffice.xlsx").text
    spans = chunk_text(text, ChunkingConfig(strategy, size), embed=_embed)
    assert "".join(text[s.start:s.end] for s in spans) == text
    starts = [text[s.start:s.end] for s in spans[1:]]
    assert starts and all(piece.startswith("| ") for piece in starts), starts


def test_a_cut_inside_a_block_moves_to_its_header_when_the_block_fits():
    text = parse_fidelity("loans.csv").text
    first, second = table_blocks(text)
    assert text[first.start:].startswith(HEADER) and text[second.start:].startswith(HEADER)
    inside = text.index("Fay Okafor") + 3  # in the second block's second row
    words = lambda a, b: len(text[a:b].split())  # noqa: E731 - a token count for the test
    assert cuts_outside_tables(text, [inside], words, size=200) == [second.start]
    # A chunk starts at the header already: the cut goes to the start of its row instead.
    assert cuts_outside_tables(text, [second.start, inside], words, size=45) == [
        second.start, text.index("| Fay Okafor")]
