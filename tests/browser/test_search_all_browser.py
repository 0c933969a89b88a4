"""In a real browser, at a phone's and a desktop's width, without an LLM: a question not found in one
collection asked of every collection with the answer's button leaves the picker on "all my
collections"; and the new-collection form says the LLM contextualisation options need an LLM."""

from __future__ import annotations

import pytest

from tests.browser.support import NO_OVERFLOW, VIEWPORTS, in_db_thread, log_in, overflow
from tests.chat.chat_corpus import COOKING, GUIDE, make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def two_collections(live_server, user, no_llm):
    def create():
        make_document(make_collection("guides", owner=user), source="deploy.md", title="Deployment guide",
                      parts=GUIDE)
        make_document(make_collection("kitchen", owner=user), source="bread.txt", title="Bread", parts=COOKING,
                      media_type="text/plain")

    in_db_thread(create)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_search_all_leaves_the_picker_on_every_collection(two_collections, live_server, chromium, viewport):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    page.select_option("#ask-form select[name=collection]", "guides")
    page.fill("#ask-form textarea[name=question]", "How long should the dough be kneaded?")
    page.click("#ask-form button[type=submit]")
    button = page.locator(".message.assistant form.search-all button")
    button.wait_for()
    button.click()
    page.locator(".message.assistant .content.answer", has_text="ten minutes").wait_for()
    assert page.locator("#ask-form select[name=collection]").input_value() == ""
    assert page.evaluate(NO_OVERFLOW), overflow(page)

    page.goto(f"{live_server.url}/documents/")
    help_text = "No LLM is configured: the two LLM options use the contextual chunk header until one is."
    assert page.get_by_text(help_text).count() == 1
    assert page.evaluate(NO_OVERFLOW), overflow(page)
    page.context.close()
