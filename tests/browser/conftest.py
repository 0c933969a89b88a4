from __future__ import annotations

import os

import pytest

from tests.browser.support import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture
def chromium():
    """A headless Chromium. Request it after the database fixtures: Playwright's sync API runs an
    event loop in this thread, inside which Django refuses ORM calls."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: run `make chromium` (apt-get install chromium).")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
