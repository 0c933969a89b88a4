"""The parse fidelity suite's quick subset (its born-digital files; `make eval-parse` adds the scan):
every file has at least the target share of its words right (a file with known losses loses no
more than those), and none doubled. Needs no poppler: pdftotext's column is only a report's."""

from chat.evaluation.fidelity import BORN_DIGITAL_TARGET, score_suite, score_text

# Words lost that are known, by file: LibreOffice's HTML import leaves the shadowed <h1> out of the PDF
# (pdftotext misses the same 4 words); groff's PDF of the man page: 2 words pdftotext misses too, and
# "newer" that pypdf reads as "ne wer" (not fixed yet).
KNOWN_LOSSES = {"guide-libreoffice.pdf": 4, "pinning-groff.pdf": 3}


def test_every_born_digital_file_is_read_right():
    scores = score_suite(scans=False)
    assert len(scores) >= 13
    for score in scores:
        if score.name in KNOWN_LOSSES:
            assert score.words_lost <= KNOWN_LOSSES[score.name], score
        else:
            assert score.words_right_share >= BORN_DIGITAL_TARGET, score
        assert score.words_doubled == 0, score
        assert score.characters_right >= 0.96, score


def test_the_score_counts_lost_and_doubled_words():
    score = score_text("memo-groff.pdf", "Abstract\nThe rooms close at 6 p.m.",
                       "AAbbssttrraacctt\n\nThe rooms rooms close at p.m.")
    assert (score.format, score.producer, score.words, score.words_right) == ("pdf", "groff", 8, 6)
    assert score.words_lost == 2 and score.words_doubled == 2
    table_text = "| a | b |\n| --- | --- |\n| 1 | 2 |\n\n| a | b |\n| --- | --- |\n| 3 | 4 |"
    assert score_text("t.csv", "a b\n1 2\n3 4", table_text).words_doubled == 0  # the repeated header is by design
