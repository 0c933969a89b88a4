"""Issue 29's "done when" for sources, in a real browser: add a site from the web UI, see its pages
become ready, remove a page from the (local, real) web server, sync, and see its document go.
Tasks run in the live server's process (eager), so the sync and the ingestion are real and complete."""

from __future__ import annotations

import pytest

from corpus.models import Collection, Document
from sources.web import pacing, robots
from tests.browser.support import DESKTOP, NO_OVERFLOW, PHONE, in_db_thread, log_in
from tests.sources.helpers import allow_folders
from tests.sources.http_site import HttpSite, sitemap

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def article(title: str, text: str) -> str:
    paragraphs = "".join(f"<p>{text} This is sentence {n} of the page about {title.lower()}.</p>" for n in range(4))
    return (f"<html><head><title>{title}</title></head><body><nav>Home | Cookie settings</nav>"
            f"<main><article><h1>{title}</h1>{paragraphs}</article></main><footer>Footer</footer></body></html>")


@pytest.fixture
def site():
    with HttpSite() as served:
        served.pages["/docs/"] = article("Harbour docs", "Welcome to the harbour handbook.")
        served.pages["/docs/tides"] = article("Tides", "High tide comes twice a day.")
        served.pages["/docs/boats"] = article("Boats", "Rowing boats live in the north shed.")
        served.pages["/sitemap.xml"] = sitemap(*(served.url(p) for p in ("/docs/", "/docs/tides", "/docs/boats")))
        yield served


@pytest.fixture
def eager_sources(settings, tmp_path, monkeypatch):
    from ragweb.celery import app

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.SOURCES_ALLOW_PRIVATE = True  # the local server is on 127.0.0.1
    monkeypatch.setattr(pacing, "HOST_INTERVAL", 0)
    settings.SOURCES_FOLDERS = []
    robots.forget()
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False
    robots.forget()


def test_add_a_site_see_pages_ready_then_a_removed_page_disappear(live_server, user, eager_sources, site, chromium):
    in_db_thread(lambda: Collection.objects.create(slug="harbour", name="Harbour", owner=user))
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=DESKTOP)
    page.set_default_timeout(90_000)  # the first sync loads the embedding model in the server
    page.goto(f"{live_server.url}/documents/?collection=harbour")
    page.click("text=Sources (web pages, sites, folders)")
    page.wait_for_url("**/sources/harbour/")
    assert "No sources yet" in page.inner_text("#source-list")

    page.select_option("select[name=kind]", "site")
    page.fill("input[name=url]", site.url("/docs/"))
    page.select_option("select[name=schedule]", "none")
    page.fill("input[name=tags]", "harbour, web")
    page.click("form.source-form button[type=submit]")

    card = page.locator("article.source").first
    card.locator(".source-documents .status-ready").nth(2).wait_for()
    assert card.locator(".source-documents li").count() == 3
    assert "3 new, 0 changed, 0 unchanged, 0 removed, 0 failed" in card.locator(".counts").inner_text()
    assert "Tides" in card.locator(".source-documents").inner_text()
    assert in_db_thread(lambda: sorted(Document.objects.filter(status="ready").values_list("source", flat=True))) \
        == sorted(site.url(p) for p in ("/docs/", "/docs/boats", "/docs/tides"))

    page.set_viewport_size(PHONE)
    assert page.evaluate(NO_OVERFLOW), "the sources page fits a phone's width"
    page.set_viewport_size(DESKTOP)

    del site.pages["/docs/boats"]
    site.pages["/sitemap.xml"] = sitemap(site.url("/docs/"), site.url("/docs/tides"))
    card.locator("button.sync-now").click()
    page.wait_for_function("document.querySelector('article.source .counts').innerText.includes('1 removed')")
    card = page.locator("article.source").first
    assert "0 new, 0 changed, 2 unchanged, 1 removed, 0 failed" in card.locator(".counts").inner_text()
    assert card.locator(".source-documents li").count() == 2
    assert "Boats" not in card.locator(".source-documents").inner_text()
    assert not in_db_thread(lambda: Document.objects.filter(source=site.url("/docs/boats")).exists())
    page.context.close()


def test_the_add_form_shows_only_the_chosen_kinds_fields(live_server, user, chromium, settings, tmp_path):
    (tmp_path / "handbook").mkdir()
    settings.SOURCES_FOLDERS = [str(tmp_path)]
    in_db_thread(lambda: allow_folders(user))
    in_db_thread(lambda: Collection.objects.create(slug="harbour", name="Harbour", owner=user))
    shown = {"url": ["kind", "url", "schedule", "tags"],
             "site": ["kind", "url", "schedule", "max_pages", "max_depth", "tags"],
             "folder": ["kind", "path", "schedule", "max_pages", "tags"]}
    for viewport in (PHONE, DESKTOP):
        page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=viewport)
        page.goto(f"{live_server.url}/sources/harbour/")
        form = page.locator("form.source-form")
        page.focus("select[name=kind]")  # keyboard only: the arrow keys change the kind
        for kind in ("url", "site", "folder"):
            assert page.input_value("select[name=kind]") == kind
            visible = form.locator("input:visible, select:visible").evaluate_all(
                "els => els.filter(e => e.type !== 'hidden').map(e => e.name)")
            assert visible == shown[kind], (viewport, kind)
            widths = {round(form.locator(f"[name={name}]").bounding_box()["width"]) for name in visible}
            assert len(widths) == 1, (viewport, kind, widths)  # every field as wide as the others
            assert page.evaluate(NO_OVERFLOW)
            page.keyboard.press("ArrowDown")
        page.context.close()
