"""A citation in a real browser lands on its sentence: a four-page PDF whose fact is on page 3,
asked about in the chat (no LLM: the extractive answer), opens at the highlighted sentence of
page 3, with the page breaks shown."""

from __future__ import annotations

import pytest

from corpus.ingest.parse.pdf import parse_pdf
from tests.browser.support import in_db_thread, log_in
from tests.chat.chat_corpus import make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FACT = "The lamp of the lighthouse was converted to electricity in 1921."
PAGES = [
    ["The Harbour Lighthouse", "A short history of the lighthouse on the northern cape.",
     "The lighthouse was built of granite from the local quarry.", "Its tower is thirty metres tall."],
    ["Keepers of the lighthouse", "Three keepers lived in the cottage beside the tower.",
     "Supplies for the lighthouse came by boat once a month.", "The keepers kept a logbook of every ship."],
    ["The lamp of the lighthouse", "The first lamp of the lighthouse burned whale oil.", FACT,
     "The old oil lamp is now shown in the town museum."],
    ["Visiting the lighthouse", "Visitors may climb the lighthouse tower in summer.",
     "Tickets are sold at the keepers' cottage.", "The view reaches the islands on a clear day."],
]


def four_page_pdf() -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title("Harbour Lighthouse")
    pdf.set_font("Helvetica", size=12)
    for lines in PAGES:
        pdf.add_page()
        for line in lines:
            pdf.multi_cell(w=0, text=line)
            pdf.ln()
    return bytes(pdf.output())


def _make_pdf_document(user) -> None:
    text, pages, _title = parse_pdf(four_page_pdf())
    assert len(pages) == 4 and pages[2] <= text.index("converted to electricity") < pages[3]
    # One chunk per page, as a page-aware chunker would cut it (chunks tile the text).
    parts = [text[a:b] for a, b in zip(pages, [*pages[1:], len(text)], strict=True)]
    make_document(make_collection("reports", owner=user), source="lighthouse.pdf", title="Harbour Lighthouse",
                  parts=parts, media_type="application/pdf", pages=pages)


def test_a_citation_of_a_pdf_lands_on_the_highlighted_sentence_of_its_page(live_server, user, no_llm, chromium):
    in_db_thread(lambda: _make_pdf_document(user))
    page = log_in(chromium, live_server.url, "alice", "alice-password-1")

    page.fill("#ask-form textarea[name=question]", "When was the lamp of the lighthouse converted to electricity?")
    page.click("#ask-form button[type=submit]")
    cite = page.locator(".message.assistant a.cite").first
    cite.wait_for()
    assert FACT in page.locator(".message.assistant .answer").inner_text()
    cite.click()
    page.wait_for_url("**/sources/**")

    mark = page.locator("mark#passage")
    assert mark.inner_text() == FACT
    assert mark.evaluate("m => m.classList.contains('support') && m.closest('.segment') !== null")
    # Scrolled to it: the sentence is in the viewport, not the top of the document.
    assert mark.evaluate("m => { const r = m.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }")
    assert page.locator(".meta .page").inner_text() == "page 3"
    breaks = page.locator(".page-break")
    assert breaks.all_inner_texts() == ["Page 2", "Page 3", "Page 4"]
    # The sentence sits between the breaks of pages 3 and 4.
    assert page.evaluate("""() => {
        const mark = document.querySelector('mark#passage');
        const before = el => el.compareDocumentPosition(mark) & Node.DOCUMENT_POSITION_FOLLOWING;
        return before(document.getElementById('page-3')) && !before(document.getElementById('page-4'));
    }""")
    page.context.close()


INVENTORY = ("| item | location | quantity |\n| --- | --- | --- |\n| spare tyres | shed shelf B | 4 |\n"
             "| chain lube | workshop drawer 3 | 2 |\n| ladders | garage north wall | 2 |\n"
             "| fertiliser | greenhouse cupboard | 10 |")


def test_a_citation_of_a_table_row_highlights_that_row_not_the_table(live_server, user, no_llm, chromium):
    # A CSV as ingestion stores it (corpus.ingest.parse.tables): the answer quotes one row, so the passage
    # view opens at that row; the rest of the table is the shaded passage around it.
    in_db_thread(lambda: make_document(make_collection("stores", owner=user), source="inventory.csv",
                                       title="inventory", parts=[INVENTORY], media_type="text/csv"))
    page = log_in(chromium, live_server.url, "alice", "alice-password-1")

    page.fill("#ask-form textarea[name=question]", "Where are the ladders kept?")
    page.click("#ask-form button[type=submit]")
    cite = page.locator(".message.assistant a.cite").first
    cite.wait_for()
    assert "garage north wall" in page.locator(".message.assistant .answer").inner_text()
    cite.click()
    page.wait_for_url("**/sources/**")

    mark = page.locator("mark#passage")
    assert mark.inner_text() == "| ladders | garage north wall | 2 |"
    # The only highlighted sentence (the legend above the document shows the highlight too).
    assert page.evaluate("""() => [...document.querySelectorAll('mark.support')]
        .filter(m => !m.closest('.legend')).map(m => m.innerText)""") == ["| ladders | garage north wall | 2 |"]
    assert "chain lube" in page.locator("section.document").inner_text()
    page.context.close()
