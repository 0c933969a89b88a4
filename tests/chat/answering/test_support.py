"""The supporting sentence of a citation and the page it is on: one finder for the stored
citation and the passage view."""

import pytest

from chat.answering.support import pin_pages, sentence_spans, support_for, supporting_spans
from tests.chat.chat_corpus import PAGES, make_collection, make_document, paged_text


def test_sentence_spans_split_sentences_and_list_items():
    text = "Intro line here. Second one!\n\n- item one\n- item two\n"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "Intro line here.", "Second one!", "- item one", "- item two"]


def test_the_supporting_sentence_is_the_one_holding_the_claim():
    text, _ = paged_text(PAGES)
    spans = supporting_spans(text, ["The lamp was converted to electricity in 1921."])
    assert [text[a:b] for a, b in spans] == ["The lamp was converted to electricity in 1921."]
    assert supporting_spans(text, ["Penguins enjoy cold water."]) == ()


def test_a_repeated_sentence_is_supported_where_it_first_appears():
    text = "Intro here.\n\nThe first element is named one.\n\nOther words.\n\nThe first element is named one."
    assert supporting_spans(text, ["The first element is named one."]) == ((13, 44),)


def test_spans_of_a_segment_are_document_offsets():
    text, _ = paged_text(PAGES)
    start = text.index("Keepers")
    spans = supporting_spans(text[start:], ["Tickets are sold at the cottage."], base=start)
    assert [text[a:b] for a, b in spans] == ["Tickets are sold at the cottage."]


def _cited(document, text, *, start=0, page=1):
    return {"n": 1, "document": {"id": document.pk, "title": document.title, "source": document.source},
            "start": 0, "end": 4, "char_start": start, "char_end": len(text), "text": text[start:start + 40] + " …",
            "score": 1.0, "page": page}


@pytest.mark.django_db
def test_the_citation_names_the_page_of_the_cited_sentence():
    text, pages = paged_text(PAGES)
    parts = [text[a:b] for a, b in zip(pages, [*pages[1:], len(text)], strict=True)]
    document = make_document(make_collection("reports"), source="report.pdf", parts=parts,
                             media_type="application/pdf", pages=pages)
    # The citation's text was cut to the budget before the cited sentence: the segment is read whole.
    citation = _cited(document, text)
    pinned = pin_pages([citation], "- The lamp was converted to electricity in 1921. [1]")
    assert [c["page"] for c in pinned] == [3]
    assert citation["page"] == 1  # a copy: the prepared sources are left as they were
    assert pin_pages([citation], "- Tickets are sold at the cottage. [1]")[0]["page"] == 4
    # Nothing in the segment supports the sentence: the page the segment starts on stays.
    assert pin_pages([_cited(document, text, start=pages[1], page=2)], "Penguins swim. [1]")[0]["page"] == 2


@pytest.mark.django_db
def test_a_document_without_pages_keeps_no_page():
    document = make_document(make_collection("notes"), source="notes.md", parts=["The lamp is electric now.\n"])
    citation = _cited(document, document.text, page=None)
    assert pin_pages([citation], "The lamp is electric now [1].")[0]["page"] is None


@pytest.mark.django_db
def test_the_page_is_that_of_the_best_quote_when_the_quotes_keep_their_order():
    text, pages = paged_text(PAGES)
    parts = [text[a:b] for a, b in zip(pages, [*pages[1:], len(text)], strict=True)]
    document = make_document(make_collection("reports"), source="report.pdf", parts=parts,
                             media_type="application/pdf", pages=pages)
    answer = "- Supplies came by boat every month. [1]\n- The lamp was converted to electricity in 1921. [1]"
    assert pin_pages([_cited(document, text)], answer)[0]["page"] == 2  # the first quote's page
    lead = {**_cited(document, text), "lead": "The lamp was converted to electricity in 1921."}
    assert pin_pages([lead], answer)[0]["page"] == 3  # the page of the best quote, quoted second
    assert support_for(text, answer, 1, lead=lead["lead"])[0][0] == text.index("The lamp was")


def test_a_quoted_table_row_is_supported_by_its_own_line():
    # An extractive answer quotes a row as "column: cell; ..." (chat.answering.blocks): the row's line
    # supports it, not the table as one block.
    text = ("Stock\n\n| item | location |\n| --- | --- |\n| ladders | garage north wall |\n"
            "| chain lube | workshop drawer 3 |")
    spans = supporting_spans(text, ["item: chain lube; location: workshop drawer 3"])
    assert [text[a:b] for a, b in spans] == ["| chain lube | workshop drawer 3 |"]


def test_a_quoted_row_of_short_cells_is_supported_by_its_row_not_the_header():
    # "Month: July; Inspection interval: every 7 days": the header holds as many of its words as the row.
    text = ("| Month | Inspection interval |\n| --- | --- |\n| April | every 10 days |\n| July | every 7 days |")
    spans = supporting_spans(text, ["Month: July; Inspection interval: every 7 days"])
    assert [text[a:b] for a, b in spans] == ["| July | every 7 days |"]


def test_a_quoted_row_under_long_column_names_is_supported_by_its_row():
    # A spreadsheet's budget sheet: the quote is mostly column names ("2026 budget (GBP)", "Spent to date
    # (GBP)", "Budget owner"), which the row's line holds only through its header.
    text = ("Sheet: Budget\n\n| Department | 2026 budget (GBP) | Spent to date (GBP) | Budget owner |\n"
            "| --- | --- | --- | --- |\n| Engineering | 420000 | 388500 | David Novak |\n"
            "| Training | 40000 | 12600 | Rachel Green |")
    claim = "Department: Training; 2026 budget (GBP): 40000; Spent to date (GBP): 12600; Budget owner: Rachel Green"
    spans = supporting_spans(text, [claim])
    assert [text[a:b] for a, b in spans] == ["| Training | 40000 | 12600 | Rachel Green |"]


def test_a_quote_without_the_markdown_link_syntax_is_found_in_the_stored_text():
    # The answer quotes "Legacy Transports" (an in-page link read as its text, blocks.display_text);
    # the passage view still finds and highlights the stored sentence, link syntax and all.
    from chat.answering.extractive import split_sentences

    stored = ("## v7+ Transports\n\nPino used to run transports in a separate process - these are now referred to as "
              "[Legacy Transports](#legacy-transports).\n\nFrom Pino v7 transports can also operate inside a "
              "[Worker Thread](https://nodejs.org/api/worker_threads.html).\n")
    quotes = split_sentences(stored)
    assert quotes == ["Pino used to run transports in a separate process - these are now referred to as "
                      "Legacy Transports.",
                      "From Pino v7 transports can also operate inside a "
                      "[Worker Thread](https://nodejs.org/api/worker_threads.html)."]
    answer = f"{quotes[0]} [1]"
    [(start, end)] = support_for(stored, answer, 1, base=100)
    assert stored[start - 100:end - 100] == ("Pino used to run transports in a separate process - these are now "
                                             "referred to as [Legacy Transports](#legacy-transports).")
