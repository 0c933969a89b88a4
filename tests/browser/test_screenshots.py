"""Screenshots of the main pages on a phone (390 x 844) and a desktop (1280 x 800), from the demo
corpus. The README's images are made by this test:

    RAGWEB_SCREENSHOTS=docs/screenshots .venv/bin/python -m pytest tests/browser/test_screenshots.py

Without RAGWEB_SCREENSHOTS it writes them to a temporary folder, so `make test` checks that every
page can be shot and fits the screen without changing the repository."""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

import pytest

from chat.services import conversation_start, message_ask
from tests.browser.support import NO_OVERFLOW, VIEWPORTS, in_db_thread, log_in
from tests.chat.chat_corpus import make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
DEMO = Path(__file__).resolve().parents[2] / "demo" / "docs"
QUESTIONS = ["How does hybrid search combine the two rankings?", "What does relevant segment extraction do?"]


def sections(text: str) -> list[str]:
    """The text cut before each "## " heading: pieces that tile it, as the chunk rows must."""
    cuts = [0] + [m.start() for m in re.finditer(r"^## ", text, re.M) if m.start()] + [len(text)]
    return [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if text[a:b]]


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def demo_conversation(live_server, user, no_llm):
    def create():
        collection = make_collection("demo", owner=user)
        collection.name = "Demo"
        collection.save()
        for path in sorted(DEMO.glob("0*.md")):
            text = path.read_text(encoding="utf-8")
            make_document(collection, source=path.name, title=text.splitlines()[0].lstrip("# "), parts=sections(text))
        conversation = conversation_start(user=user)
        for question in QUESTIONS:
            reply = list(message_ask(conversation=conversation, question=question, stream=False))[-1].message
        return conversation.get_absolute_url(), f"/messages/{reply.pk}/sources/{reply.citations[0]['n']}/"

    return in_db_thread(create)


def test_screenshots_of_the_main_pages(demo_conversation, live_server, chromium, tmp_path):
    folder = Path(os.environ.get("RAGWEB_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    conversation, passage = demo_conversation
    written = []
    for viewport, size in VIEWPORTS.items():
        for scheme in ("light", "dark") if viewport == "desktop" else ("light",):
            suffix = viewport if scheme == "light" else f"{viewport}-dark"
            dark = scheme == "dark"  # the dark theme is shown by the chat page alone
            if not dark:
                login = chromium.new_context(viewport=size).new_page()
                login.goto(f"{live_server.url}/login/")
                written.append(shoot(login, folder / f"login-{suffix}.png"))
                login.context.close()
            page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=size, color_scheme=scheme)
            page.goto(live_server.url + conversation)
            page.locator(".message.assistant .sources").last.wait_for()
            page.evaluate("scrollTo(0, 0)")  # the page opens at the latest answer; show its top
            written.append(shoot(page, folder / f"chat-{suffix}.png"))
            if viewport == "phone":
                page.click("label.drawer-button")
                page.wait_for_function("() => document.getElementById('sidebar').getBoundingClientRect().left >= 0")
                written.append(shoot(page, folder / "drawer-phone.png"))
            if not dark:
                page.goto(live_server.url + passage + "#passage")
                written.append(shoot(page, folder / f"passage-{suffix}.png"))
                page.goto(live_server.url + "/documents/")
                written.append(shoot(page, folder / f"documents-{suffix}.png"))
            page.context.close()
    for path in written:
        size = VIEWPORTS["phone" if "-phone" in path.name else "desktop"]
        assert png_size(path) == (size["width"], size["height"]), path


def shoot(page, path: Path) -> Path:
    assert page.evaluate(NO_OVERFLOW), path.name
    page.screenshot(path=str(path))
    return path
