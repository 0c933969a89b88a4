"""Managing conversations on the chat page: the list (chat only, searchable), rename, delete and
the Markdown export."""

import io
import re

import pytest
from bs4 import BeautifulSoup
from django.urls import reverse

from chat.export import conversation_markdown
from chat.models import Conversation, Message
from chat.selectors import listed_conversations, snippet
from chat.services import conversation_start, message_ask
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(user):
    collection = make_collection("guides", owner=user)
    return make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)


@pytest.fixture
def alice(client, user):
    client.force_login(user)
    return client


def chat(user, title="", *messages, source="chat"):
    conversation = conversation_start(user=user, title=title, source=source)
    for i, text in enumerate(messages):
        Message.objects.create(conversation=conversation, role="user" if i % 2 == 0 else "assistant", content=text)
    return conversation


def sidebar_titles(html: str) -> list[str]:
    nav = BeautifulSoup(html, "html.parser").find(id="conversation-list")
    return [a.find(class_="label").get_text(strip=True) for a in nav.find_all("a") if a.find(class_="label")]


def test_the_list_holds_chat_conversations_with_messages_only(alice, user, client):
    chat(user, "From the chat", "Hello?")
    chat(user, "From the API", "Hello?", source="api")
    chat(user, "From the shell", "Hello?", source="cli")
    chat(user, "")  # started but nothing asked
    html = alice.get(reverse("chat:index")).content.decode()
    assert sidebar_titles(html) == ["From the chat"]
    assert 'href="/?from=elsewhere"' in html
    elsewhere = alice.get(reverse("chat:index") + "?from=elsewhere").content.decode()
    assert sidebar_titles(elsewhere) == ["From the shell", "From the API"]


def test_api_and_command_line_asks_are_marked(user, corpus, no_llm):
    from django.core.management import call_command
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(user)
    assert api.post("/api/ask/", {"question": "What is the default request timeout?"}, format="json").status_code == 200
    call_command("ask", "What is the default request timeout?", "--user", "alice", "--json", stdout=io.StringIO())
    assert sorted(Conversation.objects.values_list("source", flat=True)) == ["api", "cli"]
    assert listed_conversations(user) == []


def test_search_finds_titles_and_message_text_with_a_snippet(alice, user):
    chat(user, "Deploying on Friday", "How do I deploy?", "Carefully.")
    chat(user, "Timeouts", "What is the default request TIMEOUT for uploads?", "Thirty seconds.")
    chat(user, "Cooking", "How long do I knead bread?", "Ten minutes.")
    found = listed_conversations(user, query="timeout")
    assert [c.label for c in found] == ["Timeouts"]
    assert str(found[0].snippet) == "What is the default request <mark>TIMEOUT</mark> for uploads?"
    assert [c.label for c in listed_conversations(user, query="  ten   minutes ")] == ["Cooking"]
    assert [c.label for c in listed_conversations(user, query="friday")] == ["Deploying on Friday"]
    assert listed_conversations(user, query="friday")[0].snippet is None  # the title matched
    html = alice.get(reverse("chat:index") + "?q=knead").content.decode()
    assert sidebar_titles(html) == ["Cooking"] and "Clear the search" in html
    partial = alice.get(reverse("chat:index") + "?q=nothing-like-this", HTTP_HX_REQUEST="true",
                        HTTP_HX_TARGET="conversation-list").content.decode()
    assert "No conversation contains “nothing-like-this”." in partial


def test_search_never_shows_other_users_conversations(user, other_user):
    chat(other_user, "Bob's timeouts", "What is the timeout?")
    assert listed_conversations(user, query="timeout") == []


def test_snippet_escapes_and_marks_the_match():
    text = "<b>bold</b> " + "a " * 40 + "the match is here " + "b " * 40
    html = str(snippet(text, "MATCH"))
    assert "<b>" not in html and html.startswith("…") and html.endswith("…")
    assert "the <mark>match</mark> is here" in html


def test_rename_keeps_the_conversation_in_place(alice, user):
    older = chat(user, "Old title", "Q")
    newer = chat(user, "Newer", "Q")
    response = alice.post(reverse("chat:rename", args=[older.pk]), {"title": "  Better   title "})
    assert response.status_code == 302 and response["Location"] == older.get_absolute_url()
    older.refresh_from_db()
    assert older.title == "Better title"
    assert listed_conversations(user)[0].pk == newer.pk  # renaming does not move it up
    alice.post(reverse("chat:rename", args=[older.pk]), {"title": "   "})
    older.refresh_from_db()
    assert older.title == "Better title"
    html = alice.get(older.get_absolute_url()).content.decode()
    assert "The title is empty." in html


def test_rename_and_delete_only_own_conversations(alice, other_user):
    theirs = chat(other_user, "Theirs", "Q")
    assert alice.post(reverse("chat:rename", args=[theirs.pk]), {"title": "Mine now"}).status_code == 404
    assert alice.post(reverse("chat:delete", args=[theirs.pk])).status_code == 404
    assert alice.get(reverse("chat:export", args=[theirs.pk])).status_code == 404
    theirs.refresh_from_db()
    assert theirs.title == "Theirs"


def test_delete_asks_first_then_removes_the_messages(alice, user):
    conversation = chat(user, "Doomed", "Q", "A")
    html = alice.get(conversation.get_absolute_url()).content.decode()
    assert "Delete “Doomed” and its 2 messages? This cannot be undone." in html
    assert alice.get(reverse("chat:delete", args=[conversation.pk])).status_code == 405  # a link cannot delete
    response = alice.post(reverse("chat:delete", args=[conversation.pk]), follow=True)
    assert "Deleted the conversation “Doomed”." in response.content.decode()
    assert not Conversation.objects.exists() and not Message.objects.exists()


def test_export_is_markdown_with_the_sources(alice, user, corpus, no_llm):
    conversation = conversation_start(user=user)
    reply = list(message_ask(conversation=conversation, question="What is the default request timeout?",
                             stream=False))[-1].message
    response = alice.get(reverse("chat:export", args=[conversation.pk]))
    text = response.content.decode()
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="what-is-the-default-request-timeout.md"'
    assert text.startswith("# What is the default request timeout?\n\n## What is the default request timeout?\n")
    assert reply.content.strip() in text
    cited = re.findall(r"^- \[(\d+)\] \[Deployment guide\]\((http://testserver/messages/\d+/sources/\d+/#passage)\)"
                       r" — `deploy.md`, chunks? [\d–]+$", text, re.M)
    assert cited and all(url.endswith(f"/sources/{n}/#passage") for n, url in cited)


def test_export_says_when_an_answer_failed():
    conversation = Conversation(title="Broken")
    question = Message(role="user", content="Why?\nReally, why?")
    failed = Message(role="assistant", status="failed", error="The language model could not be reached.")
    text = conversation_markdown(conversation, [(question, []), (failed, [])])
    assert text == ("# Broken\n\n## Why? Really, why?\n\n> Why?\n> Really, why?\n\n"
                    "*No complete answer: The language model could not be reached.*\n")


@pytest.mark.parametrize(("title", "source"), [
    ("A `tick", "odd`name.md"),
    ("Guide *one* [two](javascript:x) <b>x</b>", "``double``.md"),
    ("`", "`"),
])
def test_export_keeps_titles_and_sources_literal_whatever_backticks_they_hold(title, source):
    """A backtick in a title or a source cannot open or close a code span (nor a title make a link,
    emphasis or HTML): rendered as CommonMark, the line shows both exactly as they are."""
    from markdown_it import MarkdownIt

    from chat.export import source_line

    line = source_line({"n": 1, "document": {"id": 3, "title": title, "source": source}, "start": 0, "end": 1},
                       link="https://example.org/messages/1/sources/1/#passage")
    tokens = MarkdownIt("commonmark").parseInline(line)[0].children

    codes = [t.content for t in tokens if t.type == "code_inline"]
    links = [t.attrGet("href") for t in tokens if t.type == "link_open"]
    types = [t.type for t in tokens]
    inside = tokens[types.index("link_open") + 1:types.index("link_close")]
    assert codes == [source]
    assert links == ["https://example.org/messages/1/sources/1/#passage"]
    assert "".join(t.content for t in inside) == title and {t.type for t in inside} == {"text"}
    assert not any(t.type in {"html_inline", "em_open", "strong_open"} for t in tokens)
