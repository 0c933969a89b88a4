"""Every page fits the screen, on a phone (390 x 844) and a desktop (1280 x 800): no sideways
scrolling, even with long titles, long file names and wide code; on a phone the conversation list
is a drawer."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from chat.models import Message
from chat.services import conversation_start, message_ask
from chat.sharing import conversation_share
from tests.browser.support import NO_OVERFLOW, VIEWPORTS, in_db_thread, log_in, overflow
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE = [
    "# Wide things\n\nThe request timeout can be read from the environment as shown here.\n\n",
    "```\nexport RAGWEB_REQUEST_TIMEOUT_SECONDS_FOR_THE_UPSTREAM_SERVICE_THAT_IS_VERY_SLOW=30 # a very long line "
    "that must scroll inside its own box and never widen the page\n```\n\n",
    "| setting | default | description |\n|---|---|---|\n| REQUEST_TIMEOUT | 30 | "
    "https://example.com/a/very/long/address/that/has/no/spaces/at/all/and/keeps/going/on/and/on |\n\n",
]
LONG_TITLE = "Averyveryverylongconversationtitlewithoutanyspacesthatcouldwidenthepage" * 2


@pytest.fixture
def pages(live_server, user, no_llm):
    """The main pages of a user who has a conversation with an answer; returns their paths."""
    def create():
        collection = make_collection("guides", owner=user)
        make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)
        wide = make_document(collection, source="a/deeply/nested/folder/with-a-rather-long-file-name-for-the-wide-"
                                                "table-and-code-block-example.md", title=LONG_TITLE, parts=WIDE)
        long_one = conversation_start(user=user, title=LONG_TITLE)
        Message.objects.create(conversation=long_one, role="user", content=LONG_TITLE)
        conversation = conversation_start(user=user)
        events = message_ask(conversation=conversation, stream=False,
                             question="What is the default request timeout? " + "x" * 120)
        reply = list(events)[-1].message
        # An answer citing the wide document (code and table), whatever the answer pipeline picks.
        Message.objects.create(conversation=long_one, role="user", content="Where is the timeout set?")
        cites_wide = Message.objects.create(
            conversation=long_one, role="assistant", content="In the environment [1].", query="timeout setting",
            citations=[{"n": 1, "document": {"id": wide.pk, "title": LONG_TITLE, "source": wide.source},
                        "start": 0, "end": len(WIDE), "char_start": 0, "char_end": len(wide.text),
                        "text": wide.text, "page": None, "score": 1.0}])
        token = conversation_share(conversation=conversation)
        return {"chat": "/", "conversation": conversation.get_absolute_url(),
                "passage": f"/messages/{reply.pk}/sources/{reply.citations[0]['n']}/",
                "wide passage": f"/messages/{cites_wide.pk}/sources/1/",
                "wide conversation": long_one.get_absolute_url(),
                "shared": f"/shared/{token}/", "documents": "/documents/",
                "new collection": "/documents/collections/new/", "collection": "/documents/collections/guides/edit/"}

    return in_db_thread(create)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_no_page_scrolls_sideways(pages, live_server, chromium, viewport):
    context = chromium.new_context(viewport=VIEWPORTS[viewport])
    login = context.new_page()
    login.goto(f"{live_server.url}/login/")
    assert login.evaluate(NO_OVERFLOW), ("login", overflow(login))
    context.close()

    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    for name, path in pages.items():
        assert page.goto(live_server.url + path).status == 200, name
        assert page.evaluate(NO_OVERFLOW), (name, overflow(page))
        brand = page.locator(".topbar .brand").bounding_box()
        first_link = page.locator(".mainnav a").first.bounding_box()
        # "ragweb" and "Chat" side by side with room between them, or on two lines; never run together.
        assert brand["x"] + brand["width"] + 8 <= first_link["x"] or first_link["y"] >= brand["y"] + brand["height"]
    page.context.close()


def test_phone_conversation_list_is_a_drawer(pages, live_server, chromium):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS["phone"])
    page.goto(live_server.url + pages["conversation"])
    sidebar = page.locator("#sidebar")
    assert not sidebar.is_visible()
    assert page.locator(".message.user").first.bounding_box()["y"] < 300  # the messages come first
    page.click("label.drawer-button")
    sidebar.wait_for(state="visible")
    page.wait_for_function("() => document.getElementById('sidebar').getBoundingClientRect().left >= 0")
    assert page.locator("#sidebar").bounding_box()["height"] == VIEWPORTS["phone"]["height"]  # the full height
    assert page.evaluate(NO_OVERFLOW)
    page.locator("#conversation-list a", has_text=LONG_TITLE[:20]).click()
    expect(page.locator("h1.conversation-title")).to_have_text(LONG_TITLE[:80])  # titles are cut to 80 characters
    assert not page.locator("#sidebar").is_visible()  # closed again on the new page
    page.context.close()


def test_desktop_shows_the_list_beside_the_messages(pages, live_server, chromium):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1")
    page.goto(live_server.url + pages["conversation"])
    assert page.locator("#sidebar").is_visible() and not page.locator("label.drawer-button").is_visible()
    sidebar, chat = page.locator("#sidebar").bounding_box(), page.locator("#chat").bounding_box()
    assert sidebar["x"] + sidebar["width"] <= chat["x"]
    assert page.locator(".message.assistant.status-complete").count() == 1
    page.context.close()


def test_dark_theme_follows_the_system(pages, live_server, chromium):
    colours = {}
    for scheme in ("light", "dark"):
        page = log_in(chromium, live_server.url, "alice", "alice-password-1", color_scheme=scheme)
        colours[scheme] = page.evaluate("getComputedStyle(document.body).backgroundColor")
        page.context.close()
    assert colours == {"light": "rgb(255, 255, 255)", "dark": "rgb(15, 19, 24)"}


ADMIN_PAGES = ["/admin/", "/admin/corpus/document/", "/admin/corpus/collection/", "/admin/sources/source/",
               "/admin/chat/conversation/"]


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_no_admin_list_scrolls_sideways(pages, live_server, chromium, viewport, django_user_model):
    # The lists' tables scroll inside their own box on a phone; the page itself never does.
    in_db_thread(lambda: django_user_model.objects.create_superuser(username="root", password="root-password-1"))
    page = log_in(chromium, live_server.url, "root", "root-password-1", viewport=VIEWPORTS[viewport])
    for path in ADMIN_PAGES:
        assert page.goto(live_server.url + path).status == 200, path
        assert page.evaluate(NO_OVERFLOW), (path, overflow(page))
    page.context.close()
