"""Helpers for the browser tests: Debian's Chromium driven by Playwright against pytest-django's
live server. ORM calls go through in_db_thread (Playwright's sync API runs an event loop here)."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
VIEWPORTS = {"phone": PHONE, "desktop": DESKTOP}
NO_OVERFLOW = "document.documentElement.scrollWidth <= innerWidth"


def in_db_thread(fn):
    """Run ORM code in its own thread and close its connection afterwards."""
    from django.db import connections

    def run():
        try:
            return fn()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def log_in(browser, base_url: str, username: str, password: str, *, viewport=DESKTOP, **context_options):
    """A new browser context logged in as `username`; returns its page (on the chat page)."""
    context = browser.new_context(viewport=viewport, **context_options)
    page = context.new_page()
    page.set_default_timeout(30_000)  # the live server loads the embedding model on its first answer
    page.on("console", lambda msg: print("console:", msg.type, msg.text))
    page.on("pageerror", lambda exc: print("pageerror:", exc))
    page.goto(f"{base_url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("form[action='/login/'] button[type=submit]")
    page.wait_for_url(f"{base_url}/")
    return page


def overflow(page) -> tuple[int, int]:
    """(scrollWidth, innerWidth) of the page: the first may not exceed the second."""
    return tuple(page.evaluate("[document.documentElement.scrollWidth, innerWidth]"))
