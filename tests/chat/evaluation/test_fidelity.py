"""The parse fidelity suite's quick subset (its born-digital files; `make eval-parse` adds the scan):
every file has at least the target share of its words right, or as many as poppler's pdftotext finds
in the same PDF (the rest is not in the PDF as drawn), and none doubled."""

from chat.evaluation.fidelity import BORN_DIGITAL_TARGET, score_suite, score_text

# Words a parser loses beyond pdftotext, known and not yet fixed: pypdf reads groff's kerned "newer"
# as "ne wer".
KNOWN_MISSES = {"pinning-groff.pdf": 1}


def test_every_born_digital_file_is_read_right():
    scores = score_suite(scans=False)
    assert len(scores) >= 12
    for score in scores:
        floor = min(BORN_DIGITAL_TARGET, score.reference_words_right or BORN_DIGITAL_TARGET)
        floor -= KNOWN_MISSES.get(score.name, 0) / score.words
        assert score.words_right_share >= floor, score
        assert score.words_doubled == 0, score
        assert score.characters_right >= 0.96, score


def test_the_score_counts_lost_and_doubled_words():
    score = score_text("memo-groff.pdf", "Abstract\nThe rooms close at 6 p.m.",
                       "AAbbssttrraacctt\n\nThe rooms rooms close at p.m.")
    assert (score.format, score.producer, score.words, score.words_right) == ("pdf", "groff", 8, 6)
    assert score.words_lost == 2 and score.words_doubled == 2
    table_text = "| a | b |\n| --- | --- |\n| 1 | 2 |\n\n| a | b |\n| --- | --- |\n| 3 | 4 |"
    assert score_text("t.csv", "a b\n1 2\n3 4", table_text).words_doubled == 0  # the repeated header is by design
