"""The corpus admin in a real browser (Debian's Chromium through Playwright) against a live server
and a real Celery worker: upload two files at once, one of them empty; the empty one is refused by
name, and the good one's status and progress bar move on to "ready" without the page reloading."""

from __future__ import annotations

import pytest

from corpus.models import Collection, Document
from tests.browser.support import in_db_thread
from tests.corpus.ingest_helpers import long_markdown

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Big enough (a few hundred chunks) that the worker is still busy when the list first shows it.
FIELD_NOTES = long_markdown(150)


@pytest.fixture
def media(settings):
    """Uploads go to the default media root (RAGWEB_VAR_DIR's), which the web server and the worker share
    (MEDIA_ROOT is no longer read from the environment)."""
    return settings.MEDIA_ROOT


@pytest.fixture
def worker(media, celery_worker_process):
    return celery_worker_process


@pytest.fixture
def admin_page(live_server, worker, django_user_model, chromium):  # DB fixtures first: none in Playwright's loop
    def setup():
        root = django_user_model.objects.create_superuser(username="root", password="root-password-1")
        Collection.objects.create(slug="field", name="Field notes", owner=root, chunk_size=64, chunk_overlap=0)

    in_db_thread(setup)
    context = chromium.new_context()
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.on("console", lambda msg: print("console:", msg.type, msg.text))
    page.on("pageerror", lambda exc: print("pageerror:", exc))
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("input[name=username]", "root")
    page.fill("input[name=password]", "root-password-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    yield page
    context.close()


def test_upload_two_files_in_the_admin_and_watch_the_good_one_become_ready(admin_page, live_server):
    page = admin_page
    page.goto(f"{live_server.url}/admin/corpus/document/")
    page.locator(".object-tools a.addlink", has_text="Upload documents").click()
    page.select_option("select[name=collection]", label="Field notes")
    page.set_input_files("input[name=files]", [
        {"name": "empty.md", "mimeType": "text/markdown", "buffer": b""},
        {"name": "field-notes.md", "mimeType": "text/markdown", "buffer": FIELD_NOTES},
    ])
    page.click("#upload-form input[type=submit]")
    page.wait_for_url("**/admin/corpus/document/?collection__id__exact=*")

    messages = page.locator("ul.messagelist").inner_text()
    assert "empty.md: the file is empty." in messages.splitlines()
    assert "Added to Field notes (queued for ingestion): field-notes.md." in messages

    document = in_db_thread(lambda: Document.objects.get(source="field-notes.md"))
    assert not in_db_thread(lambda: Document.objects.filter(source="empty.md").exists())
    cell = page.locator(f'.doc-progress[data-document="{document.pk}"]')
    first_status = cell.get_attribute("data-status")
    assert first_status != "ready", "the worker finished before the list showed; use a bigger document"
    navigations: list[str] = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))
    page.evaluate("window.__sameDocument = true")

    # The progress bar counts chunks while the worker embeds them...
    page.wait_for_function(
        """id => { const bar = document.querySelector(`.doc-progress[data-document="${id}"] progress`);
                   return bar && bar.max > 1 && bar.hasAttribute("value"); }""", arg=document.pk, timeout=180_000)
    # ...and the row reaches "ready".
    page.wait_for_selector(f'.doc-progress[data-document="{document.pk}"][data-status="ready"]', timeout=180_000)

    done = in_db_thread(lambda: Document.objects.get(pk=document.pk))
    assert done.status == Document.Status.READY and done.progress_total > 1
    assert cell.locator(".doc-status").inner_text() == "Ready"
    assert cell.locator(".doc-count").inner_text() == f"{done.progress_total}/{done.progress_total}"
    assert page.locator(f'.doc-chunks[data-document="{document.pk}"]').inner_text() == str(done.progress_total)
    assert page.evaluate("window.__sameDocument") is True and navigations == []  # never reloaded
