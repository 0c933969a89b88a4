"""The chat's filter control in a real browser: one line when closed, every field within the
screen when open, on a phone (390 px) and a desktop; a question asked with a type ticked is
answered from that type only, says so, and the control stays set on reload."""

from __future__ import annotations

import pytest

from tests.browser.support import NO_OVERFLOW, VIEWPORTS, in_db_thread, log_in, overflow
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def twins(live_server, user, no_llm):
    def create():
        collection = make_collection("guides", owner=user)
        make_document(collection, source="notes/deploy.md", title="Deployment notes", parts=GUIDE)
        make_document(collection, source="manuals/deploy.pdf", title="Deployment manual", parts=GUIDE,
                      media_type="application/pdf")

    in_db_thread(create)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_the_filter_control_fits_the_screen(twins, live_server, chromium, viewport):
    width = VIEWPORTS[viewport]["width"]
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    summary = page.locator("#ask-form .filters summary")
    assert summary.bounding_box()["height"] < 40  # closed: one line above the question box

    summary.click()
    # Open, its line stays in view above the fields, so it can be closed again.
    assert summary.is_visible()
    assert summary.bounding_box()["y"] < page.locator("#ask-form input[name=tags]").bounding_box()["y"]
    for field in ("input[name=tags]", "input[name=source_prefix]", "input[name=after]", "input[name=before]",
                  "input[name=media_type][value='application/pdf']"):
        box = page.locator(f"#ask-form {field}").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (field, box)
    assert page.evaluate(NO_OVERFLOW), overflow(page)
    question = page.locator("#ask-form textarea[name=question]")
    question.scroll_into_view_if_needed()
    box = question.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORTS[viewport]["height"]  # the question box is reachable
    page.context.close()


UNCOVERED = """el => { el.scrollIntoView({block: "center"}); const r = el.getBoundingClientRect();
  const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return top === el || el.contains(top) || (el.labels && [...el.labels].some(l => l.contains(top))); }"""


@pytest.fixture
def answered(twins, user):
    from chat.services import conversation_start, message_ask

    def create():
        conversation = conversation_start(user=user)
        for question in ("What is the default request timeout?", "How do I deploy it?"):
            list(message_ask(conversation=conversation, question=question, stream=False))
        return conversation.get_absolute_url()

    return in_db_thread(create)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_open_filters_are_all_reachable_and_closed_or_applied_they_leave_the_room(answered, live_server, chromium,
                                                                                 viewport):
    height = VIEWPORTS[viewport]["height"]
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    page.goto(live_server.url + answered)
    form = page.locator("#ask-form")
    closed_height = form.bounding_box()["height"]
    assert closed_height < 200 and height - closed_height > 0.7 * height  # closed: the room is the conversation's

    page.focus("#ask-form .filters summary")  # keyboard only
    page.keyboard.press("Enter")
    assert page.locator("#ask-form details.filters").evaluate("d => d.open")
    # Every field can be brought into view, and then nothing (the pinned box) lies over it.
    for field in ("input[name=media_type][value='application/pdf']", "input[name=tags]",
                  "input[name=source_prefix]", "input[name=after]", "input[name=before]", "textarea[name=question]"):
        assert page.locator(f"#ask-form {field}").evaluate(UNCOVERED), (viewport, field)
    # Open, the form leaves the conversation a fair part of the screen where it stays pinned.
    if form.evaluate("f => getComputedStyle(f).position") == "sticky":
        assert height - form.bounding_box()["height"] >= 0.45 * height, viewport

    page.focus("#ask-form .filters summary")
    page.keyboard.press("Enter")  # closed again: one line
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert abs(form.bounding_box()["height"] - closed_height) < 2

    page.click("#ask-form .filters summary")
    page.check("#ask-form input[name=media_type][value='application/pdf']")
    page.focus("#ask-form textarea[name=question]")
    page.keyboard.type("What is the default request timeout?")
    page.keyboard.press("Enter")  # applied: the panel closes and the answer gets the room
    page.locator(".message.assistant .filtered").last.wait_for(timeout=120_000)
    assert not page.locator("#ask-form details.filters").evaluate("d => d.open")
    # The closed line names what the answer was narrowed to at once, not only after a reload.
    assert page.locator("#ask-form .filters summary").inner_text() == "Filters: PDF"
    assert page.locator("#ask-form details.filters").evaluate("d => d.hasAttribute('data-active')")
    assert abs(form.bounding_box()["height"] - closed_height) < 2
    assert page.evaluate(NO_OVERFLOW), overflow(page)
    page.context.close()


def test_a_filtered_question_on_a_phone_is_answered_from_that_type_only(twins, live_server, chromium):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS["phone"])
    page.click("#ask-form .filters summary")
    page.check("#ask-form input[name=media_type][value='application/pdf']")
    page.fill("#ask-form textarea[name=question]", "What is the default request timeout?")
    page.click("#ask-form button[type=submit]")

    page.locator(".message.assistant .sources a").first.wait_for(timeout=120_000)
    assert page.locator(".message.assistant .filtered").inner_text() == "Searched only: PDF"
    sources = page.locator(".message.assistant .sources li").all_inner_texts()
    assert sources and all("manuals/deploy.pdf" in s for s in sources), sources

    page.reload()
    assert page.locator("#ask-form input[name=media_type][value='application/pdf']").is_checked()
    assert "PDF" in page.locator("#ask-form .filters summary").inner_text()
    page.context.close()
