"""corpus.preview: a document's text cut at its chunk boundaries (pure, no database)."""

from __future__ import annotations

from corpus.preview import Span, pieces


def test_tiling_chunks_give_one_piece_each_with_alternating_shades():
    text = "Alpha beta. Gamma delta. Epsilon."
    spans = [Span(0, 0, 12), Span(1, 12, 25), Span(2, 25, len(text))]

    result = pieces(text, spans)

    assert [(p.text, p.covering, p.starts, p.shade, p.overlap) for p in result] == [
        ("Alpha beta. ", (0,), (0,), 0, False),
        ("Gamma delta. ", (1,), (1,), 1, False),
        ("Epsilon.", (2,), (2,), 0, False)]
    assert "".join(p.text for p in result) == text


def test_overlapping_chunks_and_uncovered_text_are_marked():
    text = "0123456789"
    result = pieces(text, [Span(1, 4, 10), Span(0, 0, 6)])  # a sliding window, given out of order

    assert [(p.text, p.covering, p.starts, p.overlap) for p in result] == [
        ("0123", (0,), (0,), False), ("45", (0, 1), (1,), True), ("6789", (1,), (), False)]
    gap = pieces("abcdef", [Span(0, 2, 4), Span(1, 4, 99)])  # spans beyond the text are clamped
    assert [(p.text, p.covering, p.shade) for p in gap] == [("ab", (), -1), ("cd", (0,), 0), ("ef", (1,), 1)]
    assert pieces("", []) == []
