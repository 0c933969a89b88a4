"""The API tokens page in a real browser, from a 320 px phone to a desktop: it fits the screen with
every token's Revoke in reach, and a new key (shown once) has a Copy button that puts it on the
clipboard or, when the browser will not copy, selects it for copying by hand."""

from __future__ import annotations

import pytest

from tests.browser.support import DESKTOP, NO_OVERFLOW, PHONE, log_in, overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"small phone": {"width": 320, "height": 640}, "phone": PHONE, "desktop": DESKTOP}


def make_token(page, base_url: str, name: str) -> str:
    page.goto(f"{base_url}/account/tokens/")
    page.fill("#token-name", name)
    page.click("form.collection-form button[type=submit]")
    return page.locator("#new-key").inner_text()


@pytest.mark.parametrize("size", list(WIDTHS))
def test_the_page_fits_and_copy_puts_the_new_key_on_the_clipboard(live_server, user, chromium, size):
    viewport = WIDTHS[size]
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=viewport,
                  permissions=["clipboard-read", "clipboard-write"])
    make_token(page, live_server.url, "a laptop script with a rather long name")
    key = make_token(page, live_server.url, "ci")
    assert page.evaluate(NO_OVERFLOW), (size, overflow(page))
    revokes = page.locator("button", has_text="Revoke")
    assert revokes.count() == 2
    for i in range(2):
        box = revokes.nth(i).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], (size, box)
    shown, copy = page.locator("#new-key").bounding_box(), page.locator("button.copy-key")
    assert shown["x"] + shown["width"] <= viewport["width"] and copy.is_visible()
    # Keyboard only: focus the Copy button and press Enter.
    copy.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('copy-status').textContent !== ''")
    assert page.locator("#copy-status").inner_text() == "Copied to the clipboard."
    assert page.evaluate("navigator.clipboard.readText()") == key
    assert copy.inner_text() == "Copied"
    page.goto(f"{live_server.url}/account/tokens/")
    assert page.locator("#new-key").count() == 0 and key not in page.content()  # shown once
    page.context.close()


def test_when_the_browser_will_not_copy_the_key_is_selected(live_server, user, chromium):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=PHONE)
    # A browser that refuses both ways of copying (no permission, execCommand refused).
    page.add_init_script("navigator.clipboard.writeText = () => Promise.reject(new Error('denied'));"
                         "document.execCommand = () => false;")
    key = make_token(page, live_server.url, "ci")
    page.click("button.copy-key")
    page.wait_for_function("() => document.getElementById('copy-status').textContent !== ''")
    assert page.locator("#copy-status").inner_text().startswith("Could not copy: the text is selected")
    assert page.evaluate("window.getSelection().toString()") == key
    page.context.close()
