"""In a real browser, at a phone's and a desktop's width, without an LLM: an HTML page's list, read by
the real parser, is answered as the sentence that introduces it with its items nested under it, and
the citation opens the passage holding the items."""

from __future__ import annotations

import pytest

from corpus.ingest.parse import parse_document
from tests.browser.support import NO_OVERFLOW, VIEWPORTS, in_db_thread, log_in, overflow
from tests.chat.chat_corpus import make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGE = (b"<html><head><title>Relay setup</title></head><body><h1>Relay setup</h1>"
        b"<p>The relay forwards the office's mail to the provider.</p>"
        b"<p>Before you start the relay, edit these configuration files:</p>"
        b"<ul><li>main.cf names the provider's relay host.</li><li>master.cf lists the relay's services.</li></ul>"
        b"<p>Then start the relay and watch its log.</p></body></html>")


def _make_page(user) -> None:
    document = parse_document(PAGE, filename="relay.html", media_type="text/html")
    assert "- main.cf names" in document.text  # the items as the parser writes them
    make_document(make_collection("mail", owner=user), source="relay.html", title=document.title,
                  parts=[document.text], media_type="text/html")


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_an_html_list_is_answered_as_items_under_the_sentence_that_introduces_it(live_server, user, no_llm,
                                                                                  chromium, viewport):
    in_db_thread(lambda: _make_page(user))
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    page.fill("#ask-form textarea[name=question]", "Which configuration files do I edit before starting the relay?")
    page.click("#ask-form button[type=submit]")
    cite = page.locator(".message.assistant a.cite").first
    cite.wait_for()
    items = page.locator(".message.assistant .answer li li")
    assert items.all_inner_texts() == ["main.cf names the provider's relay host.",
                                       "master.cf lists the relay's services."]
    assert page.evaluate(NO_OVERFLOW), overflow(page)
    cite.click()
    page.wait_for_url("**/sources/**")
    mark = page.locator("mark#passage")
    assert mark.inner_text() == "Before you start the relay, edit these configuration files:"
    passage = mark.evaluate("m => m.closest('.segment').innerText")
    assert "- main.cf names the provider's relay host.\n- master.cf lists the relay's services." in passage
    assert page.evaluate(NO_OVERFLOW), overflow(page)
    page.context.close()
