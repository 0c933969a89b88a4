"""While an answer streams it already reads as Markdown: lists, bold, code and citations, never the
raw `**`, `- ` or `[n` of the text that has arrived so far."""

from __future__ import annotations

import pytest

from tests.browser.support import in_db_thread, log_in
from tests.chat.chat_corpus import GUIDE, make_collection, make_document
from tests.chat.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ANSWER = ("The request timeout:\n\n- is **thirty seconds** by default [1]\n- is set with `REQUEST_TIMEOUT` [1]\n\n"
          "Failed requests are *retried twice* with exponential backoff before the service gives up [2].")


@pytest.fixture
def slow_llm(settings):
    with FakeOpenAI(ANSWER, token_delay=0.25) as server:
        settings.LLM_BASE_URL, settings.LLM_MODEL = server.base_url, "fake-model"
        settings.LLM_API_KEY, settings.LLM_MAX_RETRIES, settings.LLM_TIMEOUT = "k", 0, 10.0
        yield server


def test_a_streaming_answer_renders_as_markdown(live_server, user, chromium, slow_llm):
    in_db_thread(lambda: make_document(make_collection("guides", owner=user), source="deploy.md",
                                       title="Deployment guide", parts=GUIDE))
    page = log_in(chromium, live_server.url, "alice", "alice-password-1")
    # Record what the streaming answer shows after every change, from the first token on.
    page.evaluate("""() => {
        window.seen = [];
        new MutationObserver(() => {
            const e = document.querySelector('.answer.streaming');
            if (e && e.innerText) window.seen.push(e.innerText);
        }).observe(document.getElementById('messages'), {childList: true, subtree: true, characterData: true});
    }""")
    page.fill("#ask-form textarea[name=question]", "What is the request timeout and how are requests retried?")
    page.click("#ask-form button[type=submit]")

    # Mid-stream: the list and the bold text are already elements, before the final HTML arrives.
    page.wait_for_function("""() => {
        const e = document.querySelector('.answer.streaming');
        return e && e.querySelectorAll('ul > li').length === 2 && e.querySelector('li code');
    }""")
    streaming = page.locator(".message.assistant .answer.streaming")
    assert streaming.count() == 1  # still streaming: the final HTML has not replaced it
    assert streaming.locator("li strong").inner_text() == "thirty seconds"
    assert streaming.locator("li code").inner_text() == "REQUEST_TIMEOUT"
    assert streaming.locator(".cite").first.inner_text() == "[1]"
    page.locator(".message.assistant a.cite").first.wait_for()  # then the server's final HTML
    seen = page.evaluate("window.seen")
    assert len(seen) > 10 and seen[0] != seen[-1]
    for text in seen:  # no raw Markdown in any state a reader saw while the answer streamed
        assert "**" not in text and "`" not in text and "\n- " not in text and not text.startswith("- ")
        assert not text.rstrip().endswith("[") and "[2" not in text.replace("[2]", "")
    assert page.locator(".message.assistant .answer li strong").inner_text() == "thirty seconds"
    page.context.close()
