"""The 404 page in a real browser, on a phone and a desktop: the app's header and look, no sideways
scrolling, the way back to the chat reached with the keyboard; the tab shows the app's local icon."""

from __future__ import annotations

import pytest

from tests.browser.support import NO_OVERFLOW, VIEWPORTS, log_in, overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_404_page_fits_and_leads_back_to_the_chat(live_server, user, chromium):
    for name, viewport in VIEWPORTS.items():
        page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=viewport)
        response = page.goto(f"{live_server.url}/no/such/page/")
        assert response.status == 404, name
        assert page.locator("h1").inner_text() == "Page not found"
        assert page.locator(".topbar .mainnav a", has_text="Chat").is_visible()  # the usual header
        assert page.evaluate(NO_OVERFLOW), (name, overflow(page))
        card = page.locator(".error-page").bounding_box()
        assert card["x"] >= 0 and card["x"] + card["width"] <= viewport["width"], name
        # Keyboard only: the skip link, then the header's links, then the way back.
        for _ in range(12):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.classList.contains('back-to-chat')"):
                break
        else:
            pytest.fail(f"{name}: Tab never reached 'Back to the chat'")
        page.keyboard.press("Enter")
        page.wait_for_url(f"{live_server.url}/")
        assert page.locator("h1.conversation-title").inner_text() == "New conversation"
        # The icon linked from the page came from this site, and /favicon.ico answers with an icon.
        assert page.evaluate("fetch('/favicon.ico').then(r => [r.status, r.headers.get('content-type')])") == \
            [200, "image/png"]
        href = page.evaluate("document.querySelector('link[rel=icon]').href")
        assert href == f"{live_server.url}/static/ragweb/favicon.svg"
        assert page.evaluate(f"fetch('{href}').then(r => r.status)") == 200
        page.context.close()


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_form_sent_after_its_security_cookie_is_gone_says_to_reload(live_server, user, chromium, viewport):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    page.goto(f"{live_server.url}/account/tokens/")
    page.context.clear_cookies(name="csrftoken")  # as when cookies were cleared or blocked meanwhile
    page.fill("#token-name", "laptop")
    with page.expect_response(f"{live_server.url}/account/tokens/") as sent:
        page.click("form[action='/account/tokens/'] button[type=submit]")
    assert sent.value.status == 403
    assert page.locator("h1").inner_text() == "Please reload the page"  # not Django's "CSRF verification failed"
    assert "Reload the page and try again." in page.locator(".error-page").inner_text()
    assert page.locator(".topbar .mainnav a", has_text="Chat").is_visible()  # the app's header and look
    assert page.evaluate(NO_OVERFLOW), overflow(page)
    page.context.close()
