"""Words OCR ran together are split again with the wamerican word list: on a real scan (a page
Chromium rendered as pixels with its words set close, in the fidelity suite) and on tokens."""

from corpus.ingest.parse.words import split_joined_words
from tests.fidelity import parse_fidelity


def test_a_scan_reads_as_words():
    text = " ".join(parse_fidelity("scan-chromium.png").text.split())
    assert "95 pounds is charged depending on the distance it travels." in text
    assert "Members pay half the fee on weekdays, and the library keeps parcels" in text


def test_joined_words_split_and_words_kept():
    assert split_joined_words("dependingon the season, 95pounds, Thefeeforaparcelof95poundsis") == (
        "depending on the season, 95 pounds, The fee for a parcel of 95 pounds is")
    kept = "Washington Kowalski caterpillar OpenSSL 10kg 4GB 3rd mp3 ofthe x2025abc"
    assert split_joined_words(kept) == kept
