"""Failures told truthfully in the browser: a server error says the server failed and quotes the
error id, a lost connection says so, and the typed question stays in the box either way."""

from __future__ import annotations

import re

import pytest

from chat.models import Conversation, Message
from tests.browser.support import VIEWPORTS, in_db_thread, log_in
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
QUESTION = "What is the default request timeout?"


@pytest.fixture
def corpus(live_server, user, no_llm):
    in_db_thread(lambda: make_document(make_collection("guides", owner=user), source="deploy.md",
                                       title="Deployment guide", parts=GUIDE))


def ask(page, question=QUESTION):
    page.fill("#ask-form textarea[name=question]", question)
    page.click("#ask-form button[type=submit]")


def test_a_server_error_says_so_with_its_id_and_keeps_the_question(corpus, live_server, chromium, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("chat.views.message_ask", broken)
    page = log_in(chromium, live_server.url, "alice", "alice-password-1")
    ask(page)
    notice = page.locator("#messages .notice.error")
    notice.wait_for()
    assert re.fullmatch(r"The server failed while answering \(error [0-9a-f]{8}\)\. Please try again; .* "
                        r"Your question is still in the box\.", notice.inner_text())
    assert page.input_value("#ask-form textarea[name=question]") == QUESTION
    assert page.locator("#messages .message").count() == 0
    assert in_db_thread(lambda: Conversation.objects.count()) == 0  # no empty conversation left behind
    monkeypatch.undo()
    page.click("#ask-form button[type=submit]")  # the same question, asked again, now answered
    page.locator(".message.assistant .sources a").first.wait_for()
    assert page.input_value("#ask-form textarea[name=question]") == ""
    page.context.close()


def test_a_lost_connection_says_so_and_keeps_the_question(corpus, live_server, chromium):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1")
    page.route("**/ask/", lambda route: route.abort("internetdisconnected"))
    ask(page)
    notice = page.locator("#messages .notice.error")
    notice.wait_for()
    assert notice.inner_text() == ("The connection to the server was lost before it answered. "
                                   "Your question is still in the box.")
    assert page.input_value("#ask-form textarea[name=question]") == QUESTION
    assert in_db_thread(lambda: Message.objects.count()) == 0
    page.context.close()


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_refused_question_replaces_the_notice_of_the_one_before(corpus, live_server, chromium, viewport):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    notices = page.locator("#messages > .notice.error")
    page.click("#ask-form button[type=submit]")  # nothing typed (the box's `required` aside: sent by script)
    page.evaluate("document.querySelector('#ask-form textarea').removeAttribute('required')")
    page.click("#ask-form button[type=submit]")
    notices.first.wait_for()
    assert notices.all_inner_texts() == ["Please type a question."]
    page.locator("#ask-form textarea[name=question]").evaluate("e => e.removeAttribute('maxlength')")
    ask(page, "why " * 600)
    page.get_by_text("The question is longer than").wait_for()
    assert [text.split(" characters")[0] for text in notices.all_inner_texts()] == [
        "The question is longer than 2000"]  # the earlier notice is gone: one notice, about this attempt
    ask(page, "")
    page.get_by_text("Please type a question.").wait_for()
    assert notices.all_inner_texts() == ["Please type a question."]
    page.context.close()
