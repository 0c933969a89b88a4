"""The documents page with a document whose title is a long paragraph (a file whose first line is
long): on a desktop the other columns keep their words whole; nothing scrolls sideways at either width."""

from __future__ import annotations

import pytest

from tests.browser.support import NO_OVERFLOW, VIEWPORTS, in_db_thread, log_in, overflow
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_TITLE = "The cafeteria opens at eight in the morning and closes at three in the afternoon. " * 5


@pytest.fixture
def long_titled(live_server, user):
    def create():
        collection = make_collection("team-docs", owner=user)
        make_document(collection, source="cafeteria.md", title=LONG_TITLE.strip(), parts=GUIDE)
        make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)

    in_db_thread(create)


WORDS_WHOLE = """() => [...document.querySelectorAll("#document-table th")].map(th => {
  const range = document.createRange(); range.selectNodeContents(th);
  return [th.textContent.trim(), range.getClientRects().length]; })"""


LINES = """el => { const range = document.createRange(); range.selectNodeContents(el);
  return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size; }"""


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_long_title_leaves_the_other_columns_readable(long_titled, live_server, chromium, viewport):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    page.goto(f"{live_server.url}/documents/?collection=team-docs")
    assert page.locator("#document-table tbody tr").count() == 2
    assert page.evaluate(NO_OVERFLOW), overflow(page)
    if viewport == "desktop":
        # Each heading on one line: "Collection" and "Chunks" were broken a letter or three a line.
        headings = page.evaluate(WORDS_WHOLE)
        assert [name for name, _ in headings][:5] == ["Document", "Collection", "Status", "Progress", "Chunks"]
        assert all(lines == 1 for name, lines in headings if name), headings
        cell = page.locator("#document-table tbody tr").first.locator("td[data-label=Collection]")
        assert cell.inner_text() == "Team Docs" and cell.evaluate(LINES) <= 2  # at most a word a line
    page.context.close()
