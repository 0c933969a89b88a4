"""An extractive answer the reader is unsure of, in a real browser at phone and desktop widths: the
table row it quotes first, under its header, and the caveat below it, both on screen, nothing
scrolling sideways. The reader's probability is set by a stand-in (the model is tested in
tests/reader); everything else — search, the pipeline, the page — is the real one."""

from __future__ import annotations

import numpy as np
import pytest

from chat.answering import reading
from chat.answering.extractive import UNSURE
from tests.browser.support import NO_OVERFLOW, VIEWPORTS, in_db_thread, log_in
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TABLE = ("Sheet: Tools\n\n| Item | Location | Quantity |\n| --- | --- | --- |\n| Rake | Barn | 2 |\n"
         "| Rotavator | Shed 2 | 1 |\n| Spade | Shed 1 | 4 |\n| Lawn roller | Barn | 1 |\n")


@pytest.fixture
def unsure_reader(monkeypatch):
    """The reader finds the rotavator's row fairly likely (answers, but not SURE), the rest unlikely."""
    monkeypatch.setattr(reading.runtime, "available", lambda: True)
    monkeypatch.setattr(reading.runtime, "score",
                        lambda question, texts: np.array([0.6 if "Rotavator" in t else 0.05 for t in texts]))


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_an_unsure_answer_shows_its_row_and_says_it_may_not_answer(live_server, user, chromium, unsure_reader,
                                                                   viewport):
    in_db_thread(lambda: make_document(make_collection("tools", owner=user), source="tools.csv",
                                       title="Tools", parts=[TABLE], media_type="text/csv"))
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    page.fill("#ask-form textarea[name=question]", "Where is the rotavator kept?")
    page.click("#ask-form button[type=submit]")
    answer = page.locator(".message.assistant .answer").last
    answer.locator("em", has_text=UNSURE).wait_for()
    items = answer.locator("li")
    assert items.first.inner_text().startswith("Item: Rotavator; Location: Shed 2; Quantity: 1")
    caveat = answer.locator("em", has_text=UNSURE)
    assert caveat.is_visible()
    box = caveat.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORTS[viewport]["width"]
    assert page.evaluate(NO_OVERFLOW)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_prose_answer_the_reader_doubts_says_so_on_screen(live_server, user, chromium, viewport):
    """Prose, chosen by the heuristic and rated by the real reader: a question the guide is near but
    does not answer gets its nearest sentence and the caveat; one it answers gets no caveat."""
    in_db_thread(lambda: make_document(make_collection("guides", owner=user), source="deploy.md",
                                       title="Deployment guide", parts=GUIDE))
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    page.fill("#ask-form textarea[name=question]", "Which log levels can the service be set to?")
    page.click("#ask-form button[type=submit]")
    doubted = page.locator(".message.assistant .answer").last
    doubted.locator("em", has_text=UNSURE).wait_for()
    assert doubted.locator("li").first.inner_text().startswith("Logs are written to standard output")
    box = doubted.locator("em", has_text=UNSURE).bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORTS[viewport]["width"]
    assert page.evaluate(NO_OVERFLOW)

    page.fill("#ask-form textarea[name=question]", "What is the default request timeout?")
    page.click("#ask-form button[type=submit]")
    page.locator(".message.assistant .answer", has_text="thirty seconds").last.wait_for()
    sure = page.locator(".message.assistant .answer").last
    assert sure.locator("li").first.inner_text().startswith("The request timeout is thirty seconds")
    assert sure.locator("em", has_text=UNSURE).count() == 0
