"""Managing conversations and answers in a real browser, on a phone (390 x 844) and a desktop
(1280 x 800): rename, search, delete, export, copy, regenerate, rate and share (and a share refused
to a user who may not read what it cites). No page or open panel scrolls sideways."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from chat.models import Conversation, Feedback, Message
from chat.services import conversation_start, message_ask
from corpus.models import Collection
from tests.browser.support import NO_OVERFLOW, VIEWPORTS, in_db_thread, log_in
from tests.chat.chat_corpus import COOKING, GUIDE, make_collection, make_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
QUESTION = "What is the default request timeout?"


@pytest.fixture
def conversation(live_server, user, no_llm):
    """Alice's conversation with one answer, from her "guides" collection."""
    def create():
        collection = make_collection("guides", owner=user)
        make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)
        conversation = conversation_start(user=user)
        list(message_ask(conversation=conversation, question=QUESTION, stream=False))
        return conversation

    return in_db_thread(create)


def open_panel(page, name: str) -> None:
    page.locator(f"details.popover.{name} > summary").click()
    expect(page.locator(f"details.popover.{name} > .panel")).to_be_visible()
    assert page.evaluate(NO_OVERFLOW)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_rename_search_and_delete(conversation, live_server, chromium, viewport):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    page.goto(live_server.url + conversation.get_absolute_url())
    open_panel(page, "rename")
    page.fill("#rename-title", "Timeouts in production")
    page.click("details.rename button[type=submit]")
    expect(page.locator("h1.conversation-title")).to_have_text("Timeouts in production")
    assert in_db_thread(lambda: Conversation.objects.get().title) == "Timeouts in production"

    if viewport == "phone":
        page.click("label.drawer-button")
    page.fill("#conversation-q", "thirty seconds")  # in the answer, not the title
    expect(page.locator("#conversation-list .snippet mark")).to_have_text("thirty seconds")
    expect(page.locator("#conversation-list .label")).to_have_text(["Timeouts in production"])
    page.fill("#conversation-q", "sourdough")
    expect(page.locator("#conversation-list")).to_contain_text("No conversation contains “sourdough”.")
    assert page.evaluate(NO_OVERFLOW)
    if viewport == "phone":
        page.click("label.close-drawer")

    open_panel(page, "delete")
    expect(page.locator("details.delete .panel")).to_contain_text("Delete “Timeouts in production” and its 2 messages?")
    page.click("details.delete button.danger")
    page.wait_for_url(f"{live_server.url}/")
    expect(page.locator(".flash")).to_contain_text("Deleted the conversation “Timeouts in production”.")
    assert in_db_thread(lambda: Conversation.objects.count()) == 0
    page.context.close()


def test_export_downloads_markdown_with_sources(conversation, live_server, chromium, tmp_path):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1")
    page.goto(live_server.url + conversation.get_absolute_url())
    with page.expect_download() as download:
        page.click("a.export")
    assert download.value.suggested_filename == "what-is-the-default-request-timeout.md"
    download.value.save_as(tmp_path / "export.md")
    text = (tmp_path / "export.md").read_text()
    assert text.startswith(f"# {QUESTION}\n\n## {QUESTION}\n") and "Sources:" in text
    assert f"{live_server.url}/messages/" in text and "`deploy.md`" in text
    page.context.close()


def test_opening_a_conversation_shows_the_latest_answer(conversation, live_server, chromium):
    def more():
        for question in ("How are failed requests retried?", "Where are the logs written?"):
            list(message_ask(conversation=conversation, question=question, stream=False))
    in_db_thread(more)
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS["phone"])
    page.goto(live_server.url + conversation.get_absolute_url())
    last = page.locator("#messages .message.assistant").last
    page.wait_for_function("() => scrollY > 0")
    box = last.bounding_box()
    assert 0 <= box["y"] < 844  # on screen without scrolling
    page.context.close()


def test_copy_regenerate_and_rate_an_answer(live_server, user, chromium, fake_llm):
    in_db_thread(lambda: make_document(make_collection("guides", owner=user), source="deploy.md",
                                       title="Deployment guide", parts=GUIDE))
    fake_llm.reply = lambda request: "It is thirty seconds [1]."
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS["phone"],
                  permissions=["clipboard-read", "clipboard-write"])
    page.fill("#ask-form textarea[name=question]", QUESTION)
    page.click("#ask-form button[type=submit]")
    answer = page.locator(".message.assistant").last
    answer.locator("a.cite").first.wait_for()

    answer.locator("button.copy-answer").click()
    expect(answer.locator(".action-status")).to_have_text("Copied.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("It is thirty seconds [1].\n\nSources:\n\n- [1] [Deployment guide](http")
    assert "`deploy.md`" in copied

    fake_llm.reply = lambda request: "The timeout defaults to thirty seconds [1]."
    answer.locator("form.regenerate button").click()
    expect(page.locator(".message.assistant .answer")).to_have_text("The timeout defaults to thirty seconds [1].")
    expect(page.locator(".message.user")).to_have_count(1)
    assert page.input_value("#ask-form textarea[name=question]") == ""
    assert in_db_thread(lambda: list(Message.objects.values_list("role", flat=True))) == ["user", "assistant"]

    answer = page.locator(".message.assistant").last
    answer.locator("button.thumb.down").click()
    details = answer.locator("details.feedback-details[open]")
    details.wait_for()
    assert page.evaluate(NO_OVERFLOW)
    details.locator("textarea[name=comment]").fill("Should say where to change it.")
    details.locator("input[name=source][value='1']").check()
    evidence = "Set REQUEST_TIMEOUT in the settings file to change it"
    details.locator("textarea[name=evidence]").fill(evidence)
    details.locator("button[type=submit]").click()
    expect(answer.locator(".action-status")).to_have_text("Thanks, saved.")
    feedback = in_db_thread(lambda: Feedback.objects.get())
    assert (feedback.rating, feedback.comment, feedback.source, feedback.evidence) == (
        "down", "Should say where to change it.", "deploy.md", [evidence])
    assert feedback.answer == "The timeout defaults to thirty seconds [1]."
    page.reload()
    expect(page.locator(".message.assistant button.thumb.down")).to_have_attribute("aria-pressed", "true")
    page.context.close()


def test_share_opens_for_a_reader_and_is_refused_to_others(conversation, live_server, user, other_user, chromium,
                                                           django_user_model):
    def people():
        Collection.objects.get(slug="guides").readers.add(other_user)  # bob may read what the answer cites
        carol = django_user_model.objects.create_user(username="carol", password="carol-password-1")
        make_document(make_collection("kitchen", owner=carol), source="bread.md", parts=COOKING)
    in_db_thread(people)

    owner = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS["phone"])
    owner.goto(live_server.url + conversation.get_absolute_url())
    open_panel(owner, "share")
    owner.click("details.share button.primary")
    link = owner.locator("input.share-link")
    link.wait_for()
    url = link.input_value()
    assert url.startswith(f"{live_server.url}/shared/")
    assert owner.evaluate(NO_OVERFLOW)

    bob = log_in(chromium, live_server.url, "bob", "bob-password-1", viewport=VIEWPORTS["phone"])
    bob.goto(url)
    expect(bob.locator(".shared-conversation")).to_contain_text("Shared by alice · read-only")
    expect(bob.locator(".message.assistant .answer")).to_contain_text("thirty seconds")
    assert bob.locator("#ask-form").count() == 0 and bob.evaluate(NO_OVERFLOW)

    carol = log_in(chromium, live_server.url, "carol", "carol-password-1")
    response = carol.goto(url)
    assert response.status == 403
    expect(carol.locator("h1")).to_have_text("You may not open this conversation")
    assert "thirty" not in carol.content()

    owner.click("details.share button.danger")  # the panel is still open
    expect(owner.locator(".flash")).to_contain_text("The link no longer works.")
    assert bob.goto(url).status == 404
    for page in (owner, bob, carol):
        page.context.close()


@pytest.fixture
def corpus(live_server, user, no_llm):
    in_db_thread(lambda: make_document(make_collection("guides", owner=user), source="deploy.md",
                                       title="Deployment guide", parts=GUIDE))


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_the_first_answer_titles_the_new_conversation(corpus, live_server, chromium, viewport):
    page = log_in(chromium, live_server.url, "alice", "alice-password-1", viewport=VIEWPORTS[viewport])
    expect(page.locator("h1.conversation-title")).to_have_text("New conversation")
    long_question = QUESTION + " I mean the one for requests to the upstream service, in production."
    page.focus("#ask-form textarea[name=question]")  # keyboard only: type, Enter sends
    page.keyboard.type(long_question)
    page.keyboard.press("Enter")
    page.locator(".message.assistant.status-complete").wait_for()
    conversation = in_db_thread(lambda: Conversation.objects.get())
    expect(page.locator("h1.conversation-title")).to_have_text(long_question[:80])
    assert page.title() == f"{long_question[:80]} · ragweb"
    assert page.url == live_server.url + conversation.get_absolute_url()
    current = page.locator("#conversation-list a.current .label")
    expect(current).to_have_text(long_question[:80])  # the list too, with this one marked
    open_panel(page, "rename")  # the conversation's actions work at once, without a reload
    assert page.input_value("#rename-title") == long_question[:80]
    heading = page.locator("h1.conversation-title").bounding_box()
    assert heading["x"] >= 0 and heading["x"] + heading["width"] <= VIEWPORTS[viewport]["width"]
    page.context.close()
