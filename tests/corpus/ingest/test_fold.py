"""Compatibility characters folded at parse time, every offset moved with them."""

from __future__ import annotations

from corpus.ingest.parse import parse_document
from corpus.ingest.parse.fold import fold_text


def test_ligatures_wide_forms_and_special_spaces_become_plain_letters():
    text = "The ﬁle\u00a0ﬂag: ＡＢＣ１２ in the oﬃce… 𝐁old co\u00adoperate\u3000end"
    assert fold_text(text).text == "The file flag: ABC12 in the office... Bold cooperate end"


def test_forms_whose_look_means_something_stay():
    kept = "x² H₂O ½ ① ㎏ caf\u00e9 ¨ 한국 ㄱ"
    assert fold_text(kept).text == kept


def test_every_offset_lands_on_the_same_character():
    text = "ﬁrst ＡＢ… ﬃ\u00ad end"
    folded = fold_text(text)
    assert folded.text == "first AB... ffi end"
    # The soft hyphen (10) is gone: its offset is where the next character went.
    expected = {0: "f", 1: "r", 4: " ", 5: "A", 6: "B", 7: ".", 8: " ", 9: "f", 10: " ", 11: " ", 12: "e"}
    for offset, character in expected.items():
        assert folded.text[folded.offset(offset)] == character, offset
    assert folded.offset(len(text)) == len(folded.text)


def test_plain_ascii_is_returned_as_it_is():
    folded = fold_text("nothing to fold here")
    assert folded.text == "nothing to fold here" and folded.offset(7) == 7


def test_markdown_headings_and_title_follow_the_folded_text():
    data = "# Conﬁguration\n\nThe ﬁle is read once.\n\n## Oﬄine ﬁles\n\nQueued.\n".encode()
    document = parse_document(data, filename="guide.md")
    assert document.text == "# Configuration\n\nThe file is read once.\n\n## Offline files\n\nQueued.\n"
    assert document.title == "Configuration"
    assert [(h.title, document.text[h.start:].split("\n", 1)[0]) for h in document.headings] == [
        ("Configuration", "# Configuration"), ("Offline files", "## Offline files")]
