from __future__ import annotations

import os

import pytest

from tests.browser.support import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="package")
def shared_chromium():
    """One Playwright driver and one headless Chromium for all the browser tests: starting them costs
    seconds (the node driver, then the browser), more than many of the tests themselves.

    While Playwright's sync API is alive its event loop counts as running in this thread, and Django
    refuses ORM calls from a thread with a running loop; the ORM work here is plain synchronous code
    (fixtures, the database flush after each test), so the check is lifted for as long as the browser
    lives, as Django's documentation allows for such cases (DJANGO_ALLOW_ASYNC_UNSAFE)."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: run `make chromium` (apt-get install chromium).")
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
        with sync_playwright() as playwright:
            holder = _Holder(playwright)
            try:
                yield holder
            finally:
                holder.close()


class _Holder:
    """The shared browser, launched again if a test crashed or closed it."""

    def __init__(self, playwright):
        self._playwright = playwright
        self._browser = None

    def browser(self):
        if self._browser is None or not self._browser.is_connected():
            self._browser = self._playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        return self._browser

    def close(self) -> None:
        if self._browser is not None and self._browser.is_connected():
            self._browser.close()


@pytest.fixture
def chromium(shared_chromium):
    """A headless Chromium (shared by the package's tests); every browser context a test opened is closed
    after it, so no cookie, storage or page carries over to the next test."""
    browser = shared_chromium.browser()
    try:
        yield browser
    finally:
        if browser.is_connected():
            for context in list(browser.contexts):
                context.close()
