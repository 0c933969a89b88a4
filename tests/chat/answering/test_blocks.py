"""Blocks of PDF-like text: a heading on a line of its own is a heading, never the start of the
sentence below it."""

from chat.answering.blocks import CODE, HEADING, PARAGRAPH, parse_blocks
from chat.answering.extractive import split_sentences

PDF_TEXT = """\
3 Configuration

All settings live in one plain text file that you can edit with any editor.

3.2 The sync interval

Harbour Sync looks for changes at a fixed interval. The sync interval defaults to ninety seconds.
Done so far

Keep a copy of the file before large changes: the program never rewrites it, but an editor may.
"""


def test_a_one_line_unpunctuated_paragraph_is_a_heading():
    blocks = parse_blocks(PDF_TEXT)
    assert [(b.kind, b.text[:20], b.heading) for b in blocks] == [
        (HEADING, "3 Configuration", "3 Configuration"),
        (PARAGRAPH, "All settings live in", "3 Configuration"),
        (HEADING, "3.2 The sync interva", "3.2 The sync interval"),
        (PARAGRAPH, "Harbour Sync looks f", "3.2 The sync interval"),
        (PARAGRAPH, "Keep a copy of the f", "3.2 The sync interval"),
    ]


def test_headings_do_not_run_into_the_next_sentence():
    assert split_sentences(PDF_TEXT) == [
        "All settings live in one plain text file that you can edit with any editor.",
        "Harbour Sync looks for changes at a fixed interval.", "The sync interval defaults to ninety seconds.",
        "Keep a copy of the file before large changes: the program never rewrites it, but an editor may."]


def test_a_plain_text_section_title_of_more_words_heads_its_sentences_and_is_not_quoted():
    # A chunk of Postfix's BASIC_CONFIGURATION_README starts at its section title (corpus.ingest.parse.layout).
    text = ("What you need to know about Postfix logging\n\n"
            "Postfix daemon processes run in the background, and log problems and normal activity to the syslog "
            "daemon.\n")
    blocks = parse_blocks(text)
    assert [(b.kind, b.heading) for b in blocks] == [
        (HEADING, "What you need to know about Postfix logging"),
        (PARAGRAPH, "What you need to know about Postfix logging")]
    assert split_sentences(text) == [blocks[1].text]


def test_a_short_sentence_or_a_lower_case_line_stays_a_paragraph():
    kinds = [b.kind for b in parse_blocks("Restart it.\n\nsee the notes below\n\nWhy does it fail?\n\nText here.\n")]
    assert kinds == [PARAGRAPH] * 4


def test_a_long_hash_line_is_a_paragraph_whose_sentences_are_quoted():
    long_line = "# " + " ".join(f"Step {i} of the set-up copies the configuration file into place." for i in range(5))
    blocks = parse_blocks(f"# Set-up\n\n{long_line}\n")
    assert [(b.kind, b.heading) for b in blocks] == [(HEADING, "Set-up"), (PARAGRAPH, "Set-up")]
    assert blocks[1].text.startswith("Step 0 of the set-up")  # quoted without its "#"
    assert split_sentences(long_line)[:2] == ["Step 0 of the set-up copies the configuration file into place.",
                                              "Step 1 of the set-up copies the configuration file into place."]


def test_a_short_hash_line_stays_a_heading():
    assert [b.kind for b in parse_blocks("# Install it. Quickly\n\nRun the installer first.\n")] == [
        HEADING, PARAGRAPH]


def test_a_rest_word_reference_is_quoted_without_its_underscore():
    from chat.answering.blocks import display_text

    assert display_text("Python includes a database called SQLite_ so you need none.") == (
        "Python includes a database called SQLite so you need none.")
    assert display_text("Read Django__ first, or SQLite_.") == "Read Django first, or SQLite."
    # Markdown emphasis, dunder names, code, paths and plain identifiers are left alone.
    unchanged = "An _italic_ word, __init__, `foo_`, a/b_ and snake_case_name."
    assert display_text(unchanged) == unchanged


def test_a_number_wrapped_to_the_start_of_a_line_stays_in_its_sentence():
    from tests.fidelity import FILES

    blocks = parse_blocks((FILES / "pinning-man.txt").read_text())  # `man` output of the suite's page
    item = next(b for b in blocks if b.text.startswith("Never lend"))
    assert item.text.split()[:13] == ["Never", "lend", "an", "older", "edition", "unless", "the", "priority",
                                      "of", "that", "one", "exceeds", "1000."]
    assert any("exceeds 1000." in s for s in split_sentences((FILES / "pinning-man.txt").read_text()))


def test_numbered_lists_still_start_items():
    blocks = parse_blocks("Steps:\n1. Open the lid.\n2. Pour the water.\n3. Close it.\nThe text goes on\n4. and on.")
    assert [(b.kind, b.text) for b in blocks] == [
        (PARAGRAPH, "Steps:"), ("item", "Open the lid."), ("item", "Pour the water."),
        ("item", "Close it. The text goes on"), ("item", "and on.")]


def test_a_manual_page_section_heading_heads_its_definition_list():
    from tests.fidelity import FILES

    blocks = parse_blocks((FILES / "pinning-man.txt").read_text())
    entry = next(b for b in blocks if b.text.startswith("priority 990"))
    assert entry.kind == PARAGRAPH and entry.heading == "PRIORITIES"
    assert " ".join(entry.text.split()) == ("priority 990 given to the editions that belong to the reading list "
                                            "of the current term.")
    assert [b.text for b in blocks if b.kind == HEADING][1:5] == ["NAME", "DESCRIPTION", "PRIORITIES", "FILES"]


def test_headings_under_a_quote_read_without_markdown_markup():
    from chat.answering.blocks import display_heading

    assert display_heading("`asObject` (Boolean)") == "asObject (Boolean)"
    assert display_heading("Declaring _program_ variable") == "Declaring program variable"
    assert display_heading("``fields`` option") == "fields option"  # reST literal too


PLAIN_TEXT_EXAMPLE = """\
The example below shows how to host example.com.

     1 /etc/postfix/main.cf:
     2     virtual_alias_domains = example.com
     3     virtual_alias_maps = hash:/etc/postfix/virtual

Execute "postmap /etc/postfix/virtual" after changing the virtual file.

    /etc/postfix/main.cf:
        myorigin = $mydomain   (probably desirable: "user@$mydomain")
"""


def test_an_indented_example_in_plain_text_is_code_never_a_sentence():
    blocks = parse_blocks(PLAIN_TEXT_EXAMPLE)
    assert [b.kind for b in blocks] == [PARAGRAPH, CODE, PARAGRAPH, CODE]
    assert blocks[1].text.splitlines()[1] == "     2     virtual_alias_domains = example.com"
    assert not any("virtual_alias_maps" in s for b in blocks if b.kind == PARAGRAPH for s in split_sentences(b.text))


def test_a_chunk_that_starts_inside_an_indented_code_block_reads_it_as_code():
    chunk = ('    class Blog(models.Model):\n        name = models.CharField(max_length=100)\n\n'
             'Each model maps to a single database table.\n')
    assert [b.kind for b in parse_blocks(chunk)] == [CODE, PARAGRAPH]


def test_indented_prose_stays_prose():
    rest = ("Glossary\n========\n\nfield\n    An attribute on a model.\n\n"
            "    See :doc:`/topics/db/models`.\n\n"
            "    Note that a field maps to a column, and that its name is the column's.\n")
    assert [b.kind for b in parse_blocks(rest)][-2:] == [PARAGRAPH, PARAGRAPH]
    man = ("DESCRIPTION\n       asn1Coding reads a file of assignments and writes the DER encoding to a file.\n\n"
           "       The output file is named after the input file unless -o is given.\n")
    assert {b.kind for b in parse_blocks(man)} == {HEADING, PARAGRAPH}
