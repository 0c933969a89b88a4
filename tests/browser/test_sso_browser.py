"""Single sign-on in a real browser against a real OpenID provider (oidc-provider on node,
tests/sso/provider.py): "Sign in with ..." on the login page, the provider's own login page, back in
the chat with the collections of the user's groups; sign-out ends the provider's session too; after
the provider drops a group, the next sign-in no longer shows that group's collection."""

from __future__ import annotations

import pytest

from corpus.models import Collection
from tests.browser.support import in_db_thread
from tests.sso import provider as idp

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def provider(live_server, tmp_path, settings):
    handle = idp.start(tmp_path, app_base_url=live_server.url)
    idp.use(settings, handle)
    try:
        yield handle
    finally:
        idp.stop(handle)


@pytest.fixture
def collections(django_user_model):
    def setup():
        from django.contrib.auth.models import Group

        owner = django_user_model.objects.create_user("owner", password="owner-password-1")
        for slug, name, group in (("sales", "Sales handbook", "sales"), ("eng", "Engineering notes", "engineering")):
            collection = Collection.objects.create(slug=slug, name=name, owner=owner)
            collection.reader_groups.add(Group.objects.get_or_create(name=group)[0])

    in_db_thread(setup)


def sign_in(page, base_url: str, *, login: str) -> None:
    page.goto(f"{base_url}/login/")
    page.click("text=Sign in with single sign-on")
    if page.locator("input[name=login]").count():  # the provider's login page (skipped while its session lasts)
        page.fill("input[name=login]", login)
        page.fill("input[name=password]", "any password")
        page.click("button[type=submit]")
    if page.locator("input[name=prompt][value=consent]").count():
        page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/")


def collection_choices(page) -> list[str]:
    return page.locator("select[name=collection] option").all_inner_texts()


def test_sign_in_through_the_provider_and_lose_a_group(live_server, collections, provider, chromium):
    base = live_server.url
    provider.set_account("sub-ada", preferred_username="ada", email="ada@example.org", email_verified=True,
                         groups=["engineering", "sales"])
    context = chromium.new_context()
    # Nothing leaves this machine (the provider's pages import web fonts).
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(("http://127.0.0.1",
                  "http://localhost")) else route.abort())
    page = context.new_page()
    page.set_default_timeout(30_000)

    sign_in(page, base, login="sub-ada")

    assert page.locator(".account .who").inner_text() == "ada"
    assert sorted(collection_choices(page)) == ["Engineering notes", "Sales handbook", "all my collections"]

    page.click(".account button:has-text('Log out')")
    page.click("button[value=yes]")  # the provider asks whether to end its session too
    page.wait_for_url(f"{base}/login/")
    assert page.locator("text=Sign in with single sign-on").count() == 1

    provider.set_account("sub-ada", preferred_username="ada", email="ada@example.org", email_verified=True,
                         groups=["engineering"])
    sign_in(page, base, login="sub-ada")

    assert page.locator(".account .who").inner_text() == "ada"
    assert sorted(collection_choices(page)) == ["Engineering notes", "all my collections"]
    context.close()
