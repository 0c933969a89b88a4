"""In a real browser, at a phone's and a desktop's width, without an LLM: a plain-text guide's
indented example and a Word document's code paragraphs, read by the real parsers, are never quoted as
sentences; the answer quotes the prose, and its citation opens the passage with the example's lines
as written."""

from __future__ import annotations

import io

import pytest

from corpus.ingest.parse import parse_document
from tests.browser.support import NO_OVERFLOW, VIEWPORTS, in_db_thread, log_in, overflow
from tests.chat.chat_corpus import make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GUIDE = (b"Relay host\n\n"
         b"The relay host is the machine that forwards the office's outgoing mail to the provider.\n"
         b"Name the provider's mail server as the relay host in main.cf, as in this example.\n\n"
         b"    1 /etc/postfix/main.cf:\n"
         b"    2     relayhost = [mail.provider.example]\n"
         b"    3     smtp_tls_security_level = encrypt\n\n"
         b"Reload Postfix after every change to main.cf.\n")
LINES = ("1 /etc/postfix/main.cf:", "2     relayhost = [mail.provider.example]")


def _word_guide() -> bytes:
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    document.styles.add_style("Source Code", WD_STYLE_TYPE.PARAGRAPH)
    document.add_paragraph("Relay host", style="Heading 1")
    document.add_paragraph("The relay host is the machine that forwards the office's outgoing mail to the provider. "
                           "Name the provider's mail server as the relay host in main.cf, as in this example.")
    document.add_paragraph("1 /etc/postfix/main.cf:\n2     relayhost = [mail.provider.example]", style="Source Code")
    document.add_paragraph("3     smtp_tls_security_level = encrypt", style="Source Code")
    document.add_paragraph("Reload Postfix after every change to main.cf.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _make_guide(user, kind: str) -> None:
    data, filename, media_type = ((GUIDE, "relay.txt", "text/plain") if kind == "txt" else
                                  (_word_guide(), "relay.docx",
                                   "application/vnd.openxmlformats-officedocument.wordprocessingml.document"))
    document = parse_document(data, filename=filename, media_type=media_type)
    make_document(make_collection("mail", owner=user), source=filename, title=document.title,
                  parts=[document.text], media_type=media_type)


@pytest.mark.parametrize("kind", ["txt", "docx"])
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_an_example_is_shown_in_its_passage_and_never_quoted_as_a_sentence(live_server, user, no_llm, chromium,
                                                                          viewport, kind):
    in_db_thread(lambda: _make_guide(user, kind))
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    page.fill("#ask-form textarea[name=question]", "Where do I name the provider's mail server as the relay host?")
    page.click("#ask-form button[type=submit]")
    cite = page.locator(".message.assistant a.cite").first
    cite.wait_for()
    answer = page.locator(".message.assistant .answer").inner_text()
    assert "Name the provider's mail server as the relay host in main.cf" in answer
    assert "relayhost =" not in answer and "/etc/postfix/main.cf:" not in answer
    assert page.evaluate(NO_OVERFLOW), overflow(page)
    cite.click()
    page.wait_for_url("**/sources/**")
    passage = page.locator("mark#passage").evaluate("m => m.closest('.segment').innerText")
    assert all(line in passage for line in LINES), passage
    assert page.evaluate(NO_OVERFLOW), overflow(page)
    page.context.close()
