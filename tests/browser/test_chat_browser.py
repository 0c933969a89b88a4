"""The chat in a real browser (Debian's Chromium through Playwright) against a live server: log in,
ask, watch the answer stream from a slow OpenAI-protocol server, stop, open a citation."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from chat.models import Message
from tests.browser.support import in_db_thread, log_in
from tests.chat.chat_corpus import GUIDE, make_collection, make_document
from tests.chat.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ANSWER = "The default request timeout is thirty seconds [1], and it can be changed in the settings [1]."


@pytest.fixture
def page(live_server, user, chromium):  # DB fixtures first: none may run inside Playwright's loop
    in_db_thread(lambda: make_document(make_collection("guides", owner=user), source="deploy.md",
                                       title="Deployment guide", parts=GUIDE))
    page = log_in(chromium, live_server.url, "alice", "alice-password-1")
    yield page
    page.context.close()


@pytest.fixture
def slow_llm(settings):
    with FakeOpenAI(ANSWER, token_delay=0.15) as server:
        settings.LLM_BASE_URL, settings.LLM_MODEL = server.base_url, "fake-model"
        settings.LLM_API_KEY, settings.LLM_MAX_RETRIES, settings.LLM_TIMEOUT = "k", 0, 10.0
        yield server


def ask(page, question: str) -> None:
    page.fill("#ask-form textarea[name=question]", question)
    page.click("#ask-form button[type=submit]")


def open_first_source_and_check_highlight(page, expected: str) -> None:
    """Click the first citation (or listed source) and check the highlighted passage is shown."""
    link = page.locator(".message.assistant a.cite, .message.assistant .sources a").first
    link.click()
    page.wait_for_url("**/sources/**")
    mark = page.locator("mark#passage")
    assert expected in mark.inner_text()
    assert mark.evaluate("m => { const r = m.getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0; }")
    assert page.locator("svg.relevance-chart rect.bar.selected").count() >= 1
    assert "deploy.md" in page.locator(".meta").inner_text()


def test_answer_streams_and_citation_opens_highlighted_passage(page, slow_llm):
    ask(page, "What is the default request timeout?")
    streaming = page.locator(".message.assistant .answer.streaming")
    streaming.wait_for(state="attached")
    page.wait_for_function(
        "() => { const e = document.querySelector('.answer.streaming'); return e && e.textContent.length > 10; }")
    partial = streaming.inner_text()
    assert 10 < len(partial) < len(ANSWER) and ANSWER.startswith(partial.strip())
    assert page.locator("button.stop").is_visible()

    cite = page.locator(".message.assistant a.cite").first
    cite.wait_for()  # the final, sanitized HTML replaced the streamed text
    assert page.locator(".message.assistant .answer").inner_text().startswith("The default request timeout")
    page.locator("button.stop").wait_for(state="hidden")
    assert "/c/" in page.url  # the new conversation's address, resumable
    assert page.locator("#conversation-list a", has_text="What is the default request timeout?").count() == 1

    open_first_source_and_check_highlight(page, "thirty seconds by default")
    page.go_back()
    page.wait_for_selector(".message.assistant a.cite")
    assert in_db_thread(lambda: Message.objects.get(role="assistant").status) == "complete"


def test_stop_button_keeps_the_partial_answer(page, slow_llm):
    slow_llm.reply = lambda request: " ".join(f"word{i}" for i in range(200))
    ask(page, "Tell me everything about the deployment.")
    page.wait_for_function(
        "() => { const e = document.querySelector('.answer.streaming'); return e && e.textContent.length > 20; }")
    page.click("button.stop")
    page.locator(".message.assistant.status-stopped").wait_for()
    assert "Stopped; the partial answer is kept." in page.locator(".message.assistant").inner_text()
    reply = in_db_thread(lambda: Message.objects.get(role="assistant"))
    assert reply.status == "stopped" and reply.content.startswith("word0")
    assert 3 < len(reply.content.split()) < 200
    page.reload()  # still there after a reload
    assert page.locator(".message.assistant .answer").inner_text().startswith("word0")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def llama_server(settings):
    model = os.environ.get("RAGWEB_LLAMA_GGUF")
    if not model:
        pytest.skip("opt-in: set RAGWEB_LLAMA_GGUF to a GGUF model file to test against a real llama.cpp server")
    # llama-cpp-python compiles llama.cpp; it may live in a virtualenv of its own (RAGWEB_LLAMA_PYTHON).
    python = os.environ.get("RAGWEB_LLAMA_PYTHON", sys.executable)
    if python == sys.executable:
        pytest.importorskip("llama_cpp", reason="opt-in: llama-cpp-python is not installed (see docs/llm.md)")
    port = _free_port()
    proc = subprocess.Popen([python, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "4096"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "llama_cpp.server exited; check the model file"
                time.sleep(1)
        settings.LLM_BASE_URL, settings.LLM_MODEL = f"http://127.0.0.1:{port}/v1", "local"
        settings.LLM_API_KEY, settings.LLM_TIMEOUT, settings.LLM_MAX_RETRIES = "", 300.0, 0
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_real_llama_cpp_server_answers_with_sources(page, llama_server):
    ask(page, "What is the default request timeout?")
    page.locator(".message.assistant .sources a").first.wait_for(timeout=300_000)
    reply = in_db_thread(lambda: Message.objects.get(role="assistant"))
    assert reply.status == "complete" and reply.mode == "llm" and reply.content.strip()
    open_first_source_and_check_highlight(page, "")
