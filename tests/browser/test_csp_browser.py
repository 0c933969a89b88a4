"""The pages work under the Content-Security-Policy, in a real browser: the chat (a question answered
through htmx and the streaming script), the documents page (its filter and delete confirmation as
listeners), the admin and the API docs (Swagger UI) — and the browser reports no violation."""

from __future__ import annotations

import pytest

from tests.browser.support import in_db_thread, log_in
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(live_server, django_user_model, no_llm, chromium):  # DB fixtures first: none in Playwright's loop
    def setup():
        root = django_user_model.objects.create_superuser(username="root", password="root-password-1")
        guides = make_collection("guides", owner=root)
        make_document(guides, source="deploy.md", title="Deployment guide", parts=GUIDE)

    in_db_thread(setup)
    page = log_in(chromium, live_server.url, "root", "root-password-1")
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(f"{page.url}: {msg.text[:80]}")
            if "Content Security Policy" in msg.text else None)
    page.violations = violations
    yield page
    page.context.close()


def test_pages_htmx_admin_and_api_docs_work_under_the_policy(page, live_server):
    response = page.goto(f"{live_server.url}/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert page.evaluate("typeof htmx") == "object"
    page.fill("#ask-form textarea[name=question]", "What is the default request timeout?")
    page.click("#ask-form button[type=submit]")
    page.wait_for_selector(".message.assistant a.cite", timeout=60_000)
    assert "thirty seconds" in page.inner_text(".message.assistant")
    page.locator(".message.assistant a.cite").first.click()  # the passage view and its chart
    page.wait_for_selector("mark#passage")

    page.goto(f"{live_server.url}/documents/")
    with page.expect_navigation():
        page.select_option("select[name=collection]", "guides")
    assert "collection=guides" in page.url
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("form[data-confirm] button")
    assert page.locator("text=deploy.md").count() >= 1  # dismissed: still there

    page.goto(f"{live_server.url}/admin/corpus/collection/")
    page.click("text=Guides")
    page.wait_for_selector("input[name=name]")

    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .info .title", timeout=30_000)
    assert "ragweb API" in page.inner_text(".swagger-ui .info .title")
    assert page.violations == []
