"""Plain text as Debian ships it: nroff overstrikes read as plain characters, headings found by layout
(corpus.ingest.parse.layout), titled by its title line or the name the person gave it."""

from __future__ import annotations

import pytest

from corpus.ingest.chunk import ChunkingConfig, chunk_text, heading_paths
from corpus.ingest.parse import parse_document
from corpus.ingest.parse.detect import TEXT
from corpus.ingest.parse.layout import layout_headings
from corpus.ingest.parse.text import strip_overstrike

# The first lines of Postfix 3.7's BASIC_CONFIGURATION_README as Debian's postfix-doc ships it
# (/usr/share/doc/postfix/README_FILES), its headings in nroff bold: every character struck twice.
POSTFIX_README = (
    b"P\x08Po\x08os\x08st\x08tf\x08fi\x08ix\x08x B\x08Ba\x08as\x08si\x08ic\x08c C\x08Co\x08on\x08nf\x08fi\x08ig\x08gu"
    b"\x08ur\x08ra\x08at\x08ti\x08io\x08on\x08n\n\n"
    b"-------------------------------------------------------------------------------\n\n"
    b"I\x08In\x08nt\x08tr\x08ro\x08od\x08du\x08uc\x08ct\x08ti\x08io\x08on\x08n\n\n"
    b"Postfix has several hundred configuration parameters that are controlled via\n"
    b"the main.cf file. Fortunately, all parameters have sensible default values. In\n"
    b"many cases, you need to configure only two or three parameters before you can\n"
    b"start to play with the mail system. Here's a quick introduction to the syntax:\n\n"
    b"  * Postfix configuration files\n\n"
    b"  * What clients to relay mail from\n\n"
    b"P\x08Po\x08os\x08st\x08tf\x08fi\x08ix\x08x c\x08co\x08on\x08nf\x08fi\x08ig\x08gu\x08ur\x08ra\x08at\x08ti\x08io"
    b"\x08on\x08n f\x08fi\x08il\x08le\x08es\x08s\n\n"
    b"By default, Postfix configuration files are in /etc/postfix. The two most\n"
    b"important files are main.cf and master.cf; these files must be owned by root.\n\n"
    b"You specify a configuration parameter as:\n\n"
    b"    /etc/postfix/main.cf:\n"
    b"        parameter = value\n\n"
    b"W\x08Wh\x08ha\x08at\x08t c\x08cl\x08li\x08ie\x08en\x08nt\x08ts\x08s t\x08to\x08o r\x08re\x08el\x08la\x08ay\x08y "
    b"m\x08ma\x08ai\x08il\x08l f\x08fr\x08ro\x08om\x08m\n\n"
    b"By default, Postfix will forward mail from clients in authorized network\n"
    b"blocks to any destination.\n"
)
POSTFIX_TITLES = ["Postfix Basic Configuration", "Introduction", "Postfix configuration files",
                  "What clients to relay mail from"]


def headings_of(text: str) -> list[tuple[int, str]]:
    return [(h.level, h.title) for h in layout_headings(text)]


def parse_text(text: str, filename: str = "notes.txt", **kwargs):
    return parse_document(text.encode(), filename=filename, **kwargs)


# --- overstrikes ---

def test_a_readme_in_nroff_bold_reads_as_its_plain_text_not_as_binary():
    document = parse_document(POSTFIX_README, filename="BASIC_CONFIGURATION_README.txt")
    assert document.media_type == TEXT
    assert "\x08" not in document.text
    assert document.text.startswith("Postfix Basic Configuration\n\n-----")
    assert "\n\nWhat clients to relay mail from\n\nBy default, Postfix will forward" in document.text


def test_a_few_overstrikes_under_the_binary_limit_are_not_kept_in_the_text():
    text = "Some ordinary notes about the relay host, " * 40 + "and one b\x08bo\x08ol\x08ld\x08d word.\n"
    assert parse_text(text).text.endswith("and one bold word.\n")


@pytest.mark.parametrize(("struck", "plain"), [
    ("N\x08NA\x08AM\x08ME\x08E", "NAME"),  # bold: struck twice
    ("_\x08f_\x08i_\x08l_\x08e", "file"),  # underline, underscore first (nroff)
    ("f\x08_i\x08_l\x08_e\x08_", "file"),  # underline, underscore last
    ("_\x08x\x08x", "x"),  # bold and underlined
    ("a_\x08_b", "a_b"),  # an underlined underscore stays one
    ("tab\x08", "tab\x08"),  # a backspace striking nothing stays (and counts as a control character)
])
def test_overstruck_characters_read_as_the_character(struck, plain):
    assert strip_overstrike(struck) == plain


# --- headings by layout ---

def test_postfix_titles_standing_alone_are_headings_and_the_first_titles_the_document():
    document = parse_document(POSTFIX_README, filename="postfix-basic-configuration.txt")
    assert [h.title for h in document.headings] == POSTFIX_TITLES
    assert {h.level for h in document.headings} == {1}
    assert [document.text[h.start:].split("\n", 1)[0] for h in document.headings] == POSTFIX_TITLES
    assert document.title == "Postfix Basic Configuration"


def test_underlined_titles_take_levels_in_the_order_their_characters_appear():
    text = ("Field guide\n===========\n\nBirds of the coast and where to see them, in one short paragraph.\n\n"
            "Shore birds\n-----------\n\nThey feed where the tide goes out.\nThey nest in the dunes.\n\n"
            "Herons\n~~~~~~\n\nHerons wait in the shallows.\n\n"
            "Where to watch\n\nThe old stone bridge over the river gives the best view of the heronry.\n\n"
            "Waders\n------\n\nThey probe the mud with long bills.\n")
    assert headings_of(text) == [(1, "Field guide"), (2, "Shore birds"), (3, "Herons"), (4, "Where to watch"),
                                 (2, "Waders")]
    assert [text[h.start:].split("\n", 1)[0] for h in layout_headings(text)] == [
        "Field guide", "Shore birds", "Herons", "Where to watch", "Waders"]


def test_titles_standing_alone_come_below_every_underline_style_wherever_they_first_appear():
    text = ("Relay notes\n\nHow this host relays mail, in one short paragraph of two lines\nthat ends here.\n\n"
            "Clients\n=======\n\nOnly the local machine may relay.\n")
    document = parse_text(text, filename="stored_Ab12Cd3.txt", name="relay.txt")
    assert [(h.level, h.title) for h in document.headings] == [(2, "Relay notes"), (1, "Clients")]
    assert document.title == "Relay notes"  # the line that opens the text, whatever its level


@pytest.mark.parametrize(("text", "title"), [
    ("Title\n-------------------------------------------\n\nA line drawn right under words underlines them.\n",
     "Title"),
    ("1. Documentation\n================\n\nThe manuals are in doc/.\n", "1. Documentation"),
    ("jq\n==\n\njq is like sed for JSON data.\n", "jq"),
    ("Unpacking and Installation -- quick overview\n==========================\n\nIn this release...\n",
     "Unpacking and Installation -- quick overview"),
])
def test_underlines_of_other_lengths_and_numbered_titles_make_headings(text, title):
    assert headings_of(text) == [(1, title)]


def test_an_over_and_underlined_title_is_its_own_style_starting_at_its_overline():
    text = "=========\n Release \n=========\n\nThe release notes of the spring version.\n\nFixes\n=====\n\nNone.\n"
    headings = layout_headings(text)
    assert [(h.start, h.level, h.title) for h in headings] == [(0, 1, "Release"), (text.index("Fixes"), 2, "Fixes")]


@pytest.mark.parametrize("text", [
    # an "underline" under half as long as its words, or a signature's dashes
    "A much longer line of words here\n===\n\nSome words follow here.\n",
    "Have fun with it\n-- \nWietse\n",
    # the last line of a paragraph with a rule right under it
    "The first line of a paragraph\nand its second line\n-------------------\n\nMore text.\n",
    # a list item underlined is still a list item
    "- one item\n----------\n\nMore text follows here.\n",
])
def test_lines_of_dashes_that_underline_no_title_make_no_heading(text):
    assert layout_headings(text) == []


PARAGRAPH = "The relay host takes the mail of the whole network.\nIt keeps it until the link is up again.\n"


@pytest.mark.parametrize("line", [
    "Thanks for reading the guide.",  # a short paragraph: a sentence
    "Examples (specify only one of the following):",  # introduces what follows
    "Regards,",  # a letter's closing
    "Do not do this!",
    "  Indented Line",  # code or a quote
    "- Install the package",  # list items
    "* Install the package",
    "1. Install the package",
    "b) Install the package",
    "make install",  # a command: no capital
    "See https://www.postfix.org",  # a URL
    "Wietse Venema <wietse@porcupine.org>",  # an address
    "Name        Value",  # a row of a table set in spaces
    "The homepage of this package is at",  # a sentence that runs on into what follows
    "Postfix " * 13,  # too many words
    "Relay" + "host" * 20,  # too long
    "mydestination = $myhostname",  # an assignment
])
def test_lines_that_do_not_read_as_titles_are_not_headings(line):
    text = f"{PARAGRAPH}\n{line}\n\n{PARAGRAPH}"
    assert headings_of(text) == []


@pytest.mark.parametrize("after", [
    "",  # nothing follows: the text's last line
    "    postfix reload\n",  # an indented block it introduces: code
    "https://www.postfix.org/\n",  # a URL it introduces
    "-- \nWietse\n",  # a signature
    "Wietse Venema\n",  # another short line
])
def test_a_title_like_line_not_followed_by_a_paragraph_is_not_a_heading(after):
    text = f"{PARAGRAPH}\nHave fun with Postfix\n\n{after}"
    assert headings_of(text) == []


def test_a_title_like_line_above_a_list_or_a_one_sentence_paragraph_is_a_heading():
    text = f"{PARAGRAPH}\nRelay clients\n\n  * mynetworks\n  * relay_domains\n\nAnother one\n\nIt ends here.\n"
    assert headings_of(text) == [(1, "Relay clients"), (1, "Another one")]


def test_questions_and_numbered_sections_are_titles():
    text = (f"{PARAGRAPH}\nHow do I relay mail for my network?\n\n{PARAGRAPH}\n2.1 Relay restrictions\n\n{PARAGRAPH}"
            f"\nPostfix < 2.2 (and its TLS patch)\n\n{PARAGRAPH}")
    assert headings_of(text) == [(1, "How do I relay mail for my network?"), (1, "2.1 Relay restrictions"),
                                 (1, "Postfix < 2.2 (and its TLS patch)")]


def test_only_the_first_line_may_stand_above_another_heading():
    text = f"Postfix Guide\n\nIntroduction\n\n{PARAGRAPH}\nMy Street 1\n\nSpringfield\n\n{PARAGRAPH}"
    # "Springfield" stands above a paragraph; "My Street 1" above it only, and is not the first line.
    assert headings_of(text) == [(1, "Postfix Guide"), (1, "Introduction"), (1, "Springfield")]


# --- chunks and titles ---

def test_chunks_start_at_sections_and_carry_their_heading_path():
    document = parse_document(POSTFIX_README, filename="postfix-basic-configuration.txt")
    spans = chunk_text(document.text, ChunkingConfig("markdown", 48), headings=document.headings)
    paths = heading_paths(document.headings, [span.start for span in spans])
    chunks = [(document.text[span.start:span.end], path) for span, path in zip(spans, paths, strict=True)]
    relay = [(text, path) for text, path in chunks if "forward mail from clients" in text]
    assert relay == [(relay[0][0], ["What clients to relay mail from"])]
    assert relay[0][0].startswith("What clients to relay mail from\n\nBy default")
    # The title of a section ends no chunk of the section before it.
    assert not any(text.rstrip().endswith("\n\n" + t) for text, _ in chunks for t in POSTFIX_TITLES)


def test_plain_text_without_a_title_line_is_titled_by_the_name_it_was_given():
    text = "the relay settings live in main.cf.\n\nSecond paragraph, still no title.\n"
    document = parse_text(text, filename="postfix-notes_4wEfB12.txt", name="guides/postfix-notes.txt")
    assert (document.title, document.headings) == ("postfix-notes", [])
    assert parse_text(text, filename="postfix-notes.txt").title == "postfix-notes"  # the name defaults to filename


def test_a_heading_further_down_does_not_title_plain_text():
    text = f"{PARAGRAPH}\nRelay clients\n\n{PARAGRAPH}"
    document = parse_text(text, filename="stored_x1Y2z3A.txt", name="relay.txt")
    assert [h.title for h in document.headings] == ["Relay clients"]
    assert document.title == "relay"


@pytest.mark.parametrize(("name", "title"), [
    ("guides/setup.md", "setup"), ("https://example.org/zebras/index.html", "index"),
    ("https://example.org/", "example.org"), ("C:\\docs\\notes.txt", "notes"),
])
def test_every_format_without_a_stated_title_is_titled_by_its_given_name(name, title):
    document = parse_document(b"## Only a subsection\n\nText.\n", filename="stored_Ab12Cd3.md", name=name)
    assert document.title == title
