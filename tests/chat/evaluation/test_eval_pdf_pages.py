"""eval_pdf_pages: the questions it makes from a PDF's headings and how it finds a quoted sentence."""

from chat.evaluation.management.commands.eval_pdf_pages import cited_offset, questions_for
from corpus.models import Document

TEXT = ("NAME\n\ngrep - print lines that match patterns\n\nOPTIONS\n\n-v, --invert-match\n\n"
        "Invert the sense of matching,\nto select non-matching lines.\n\n2.4 Library Notes\n\n"
        "The header file of this library is libtasn1.h.")


def test_questions_ask_about_options_and_headings():
    document = Document(text=TEXT, source="docs/grep.pdf")
    assert questions_for(document, 5) == ["What does the -v option of grep do?",
                                          "What does the grep manual say about Library Notes?"]
    assert len(questions_for(document, 1)) == 1


def test_a_quote_is_found_across_line_breaks_and_a_cut():
    start = TEXT.index("Invert")
    assert cited_offset(TEXT, "Invert the sense of matching, to select …", 0, len(TEXT)) == start
    assert cited_offset(TEXT, "Nothing like this is here at all", 0, len(TEXT)) is None
