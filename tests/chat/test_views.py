"""The chat page, asking with and without streaming, the stop button and the passage view."""

import json
import re

import pytest
from bs4 import BeautifulSoup
from django.urls import reverse

from chat.models import Conversation, Message
from chat.services import conversation_start, message_ask
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(user):
    collection = make_collection("guides", owner=user)
    return {"collection": collection,
            "guide": make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)}


@pytest.fixture
def alice(client, user):
    client.force_login(user)
    return client


def assert_inert(html: str) -> None:
    """No element that runs script: only our own static scripts, no on* attributes, no javascript: URLs."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.find_all(True):
        assert tag.name not in ("iframe", "img", "object", "embed", "style"), str(tag)[:200]
        if tag.name == "script":
            assert tag.get("src", "").startswith("/static/") and not tag.string, str(tag)[:200]
        for name, value in tag.attrs.items():
            assert not name.lower().startswith("on"), str(tag)[:200]
            text = " ".join(value) if isinstance(value, list) else value
            assert "javascript:" not in text.lower().replace(" ", ""), str(tag)[:200]


def sse_events(response) -> list[tuple[str, dict]]:
    body = b"".join(response.streaming_content).decode()
    return [(m.group(1), json.loads(m.group(2))) for m in re.finditer(r"event: (\w+)\ndata: (.*)\n\n", body)]


def answered(user, question="What is the default request timeout?", **kwargs) -> Message:
    conversation = conversation_start(user=user)
    return list(message_ask(conversation=conversation, question=question, stream=False, **kwargs))[-1].message


def with_question(conversation, question="A question"):
    Message.objects.create(conversation=conversation, role="user", content=question)
    return conversation


def test_chat_page_requires_login(client):
    response = client.get(reverse("chat:index"))
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_page_lists_own_conversations_and_readable_collections(alice, user, other_user, corpus):
    make_collection("secret", owner=other_user)
    make_collection("shared", public=True)
    with_question(conversation_start(user=user, title="Mine about timeouts"))
    with_question(conversation_start(user=other_user, title="Bob's private chat"))
    html = alice.get(reverse("chat:index")).content.decode()
    assert "Mine about timeouts" in html and "Bob&#x27;s private chat" not in html
    options = re.findall(r'<option value="([^"]*)"', html)
    assert options == ["", "guides", "shared"]


def test_ask_without_js_answers_and_redirects(alice, corpus, no_llm):
    response = alice.post(reverse("chat:ask"), {"question": "What is the default request timeout?",
                                                "collection": "guides"})
    conversation = Conversation.objects.get()
    reply = conversation.messages.get(role="assistant")
    assert response.status_code == 302
    assert response["Location"] == f"/c/{conversation.pk}/#m{reply.pk}"
    assert conversation.collection == corpus["collection"]
    html = alice.get(f"/c/{conversation.pk}/").content.decode()
    assert "Quoted from the sources (no LLM)" in html and "Extractive answer" not in reply.content
    assert re.search(rf'<a class="cite" href="/messages/{reply.pk}/sources/\d+/#passage"', html)
    assert '<details class="sources" open>' in html and "deploy.md" in html


def test_not_found_is_shown_as_an_answer_not_as_an_error(alice, corpus, no_llm):
    alice.post(reverse("chat:ask"), {"question": "Who won the football world cup in 1998?", "collection": "guides"})
    conversation = Conversation.objects.get()
    html = alice.get(f"/c/{conversation.pk}/").content.decode()
    answer = html[html.index('class="message assistant'):]
    assert ('<div class="notice not-found"><p><strong>Not found.</strong> '
            'Nothing in the collection “Guides” answers') in answer
    # What was searched is named, and the same question can be asked of every collection.
    assert 'class="inline search-all"' in answer
    assert '<input type="hidden" name="question" value="Who won the football world cup in 1998?">' in answer
    assert 'class="notice error"' not in answer and 'role="alert"' not in answer
    assert ">Regenerate</button>" in answer  # and it can be rated, like any answer
    assert 'class="thumb up"' in answer


def test_a_question_not_found_in_one_collection_can_be_asked_of_all(alice, user, corpus, no_llm):
    from tests.chat.chat_corpus import COOKING

    make_document(make_collection("kitchen", owner=user), source="bread.txt", title="Bread", parts=COOKING,
                  media_type="text/plain")
    question = "How long should the dough be kneaded?"
    alice.post(reverse("chat:ask"), {"question": question, "collection": "guides"})
    conversation = Conversation.objects.get()
    html = alice.get(f"/c/{conversation.pk}/").content.decode()
    form = BeautifulSoup(html, "html.parser").select_one("form.search-all")
    fields = {i["name"]: i.get("value", "") for i in form.select("input[type=hidden]")}
    assert fields.pop("csrfmiddlewaretoken")
    assert fields == {"question": question, "collection": "", "conversation": str(conversation.pk)}

    alice.post(form["action"], fields)
    reply = conversation.messages.filter(role="assistant").order_by("-pk").first()
    assert reply.status == "complete" and "ten minutes" in reply.content
    assert [c["document"]["source"] for c in reply.citations] == ["bread.txt"]
    page = alice.get(f"/c/{conversation.pk}/").content.decode()
    assert page.count("form method=\"post\" action=\"/ask/\" class=\"inline search-all\"") == 1  # not under the answer
    # The picker shows what the last question searched: every collection, no longer "Guides".
    picker = BeautifulSoup(page, "html.parser").select_one("#ask-form select[name=collection]")
    assert picker.select_one("option[selected]") is None and picker.select_one("option")["value"] == ""


def test_ask_streams_server_sent_events(alice, corpus, fake_llm):
    fake_llm.reply = lambda request: "It is **thirty** seconds [1]."
    response = alice.post(reverse("chat:ask"), {"question": "What is the default request timeout?"},
                          HTTP_ACCEPT="text/event-stream")
    assert response["Content-Type"].startswith("text/event-stream")
    events = sse_events(response)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "done" and kinds.count("token") == 5
    assert "".join(data["text"] for kind, data in events if kind == "token") == "It is **thirty** seconds [1]."
    start, done = events[0][1], events[-1][1]
    assert done["status"] == "complete"
    assert "<strong>thirty</strong>" in done["html"]
    assert f'href="/messages/{start["message"]}/sources/1/#passage"' in done["html"]
    assert start["stop_url"] == f"/messages/{start['message']}/stop/"


def test_empty_question_is_a_notice(alice, corpus):
    response = alice.post(reverse("chat:ask"), {"question": "   "}, follow=True)
    assert "Please type a question." in response.content.decode()
    streamed = alice.post(reverse("chat:ask"), {"question": ""}, HTTP_ACCEPT="text/event-stream")
    assert sse_events(streamed) == [("notice", {"message": "Please type a question."})]
    assert not Message.objects.exists()


def test_unreadable_collection_in_a_new_conversation_stores_nothing_and_keeps_the_question(
        alice, other_user, corpus, no_llm):
    make_collection("secret", owner=other_user)
    response = alice.post(reverse("chat:ask"), {"question": "Tell me secrets", "collection": "secret"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "No collection &#x27;secret&#x27; that you may read." in html
    assert re.search(r'<textarea name="question"[^>]*>Tell me secrets</textarea>', html)
    streamed = alice.post(reverse("chat:ask"), {"question": "Tell me secrets", "collection": "secret"},
                          HTTP_ACCEPT="text/event-stream")
    assert sse_events(streamed) == [("notice", {"message": "No collection 'secret' that you may read."})]
    assert not Conversation.objects.exists() and not Message.objects.exists()


def test_unreadable_collection_in_a_conversation_becomes_a_message(alice, user, other_user, corpus, no_llm):
    make_collection("secret", owner=other_user)
    conversation = conversation_start(user=user)
    alice.post(reverse("chat:ask"), {"question": "Tell me secrets", "collection": "secret",
                                     "conversation": conversation.pk})
    reply = Message.objects.get(role="assistant")
    assert reply.status == "failed" and reply.error == "No collection 'secret' that you may read."
    conversation.refresh_from_db()
    assert conversation.title == "Tell me secrets"  # not "Conversation 7"
    html = alice.get(reply.conversation.get_absolute_url()).content.decode()
    assert "No collection &#x27;secret&#x27; that you may read." in html


def test_other_users_conversation_is_404(alice, other_user, corpus):
    theirs = conversation_start(user=other_user, title="theirs")
    assert alice.get(f"/c/{theirs.pk}/").status_code == 404
    assert alice.post(reverse("chat:ask"), {"question": "hi", "conversation": theirs.pk}).status_code == 404
    assert not theirs.messages.exists()


def test_conversation_list_partial_for_htmx(alice, user):
    with_question(conversation_start(user=user, title="Only this"))
    response = alice.get(reverse("chat:index"), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="conversation-list")
    html = response.content.decode()
    assert html.strip().startswith('<nav id="conversation-list"') and "Only this" in html
    assert "<form" not in html


def test_stop_marks_a_running_answer(alice, user, other_user):
    conversation = conversation_start(user=user)
    running = Message.objects.create(conversation=conversation, role="assistant", status="streaming")
    assert alice.post(reverse("chat:stop", args=[running.pk]), HTTP_ACCEPT="application/json").status_code == 204
    running.refresh_from_db()
    assert running.stop_requested
    theirs = Message.objects.create(conversation=conversation_start(user=other_user), role="assistant",
                                    status="streaming")
    assert alice.post(reverse("chat:stop", args=[theirs.pk])).status_code == 404


def test_passage_view_highlights_the_segment_and_charts_relevance(alice, user, corpus, no_llm):
    reply = answered(user)
    citation = next(c for c in reply.citations if c["document"]["source"] == "deploy.md")
    response = alice.get(reverse("chat:passage", args=[reply.pk, citation["n"]]))
    html = response.content.decode()
    assert response.status_code == 200
    segment = re.search(r'<div class="passage segment">(.*?)</div>', html, re.S).group(1)
    mark = re.search(r'<mark class="passage support" id="passage">(.*?)</mark>', segment, re.S).group(1)
    assert mark == "The request timeout is thirty seconds by default."  # the sentence the answer quotes
    assert "<h1>Deployment guide</h1>" in html.replace(f"[{citation['n']}] ", "")
    assert '<svg class="relevance-chart"' in html
    assert len(re.findall(r'<rect class="bar', html)) == len(GUIDE)
    assert len(re.findall(r'<rect class="bar selected"', html)) == citation["end"] - citation["start"]


def test_passage_view_shows_pdf_page(alice, user, no_llm):
    collection = make_collection("papers", owner=user)
    parts = ["Page one talks about apples and orchards in spring. ",
             "Page two says the request timeout is thirty seconds by default. "]
    make_document(collection, source="paper.pdf", title="Paper", parts=parts, media_type="application/pdf",
                  pages=[0, len(parts[0])])
    reply = answered(user)
    citation = next(c for c in reply.citations if c["start"] <= 1 < c["end"])
    html = alice.get(reverse("chat:passage", args=[reply.pk, citation["n"]])).content.decode()
    assert '<pre class="doc plain">' in html
    # The page of the sentence the answer cites, wherever the cited segment starts.
    assert '<span class="page">page 2</span>' in html and '<span class="page-break" id="page-2"' in html


def test_passage_view_is_404_without_read_permission(alice, client, user, other_user, corpus, no_llm):
    reply = answered(user)
    url = reverse("chat:passage", args=[reply.pk, 1])
    client.force_login(other_user)
    assert client.get(url).status_code == 404  # not their message
    client.force_login(user)
    assert client.get(reverse("chat:passage", args=[reply.pk, 99])).status_code == 404
    collection = corpus["collection"]
    collection.owner = other_user  # alice loses access to the collection
    collection.save()
    assert client.get(url).status_code == 404


def test_hostile_document_text_cannot_run_script(alice, user, no_llm):
    parts = ["# Hostile\n\nThe request timeout is thirty seconds by default. <script>alert(1)</script>\n\n",
             "<img src=x onerror=alert(2)> [link](javascript:alert(3)) <iframe src=https://evil.example>\n\n"]
    make_document(make_collection("hostile-md", owner=user), source="evil.md",
                  title="<b onmouseover=alert(4)>Evil</b>", parts=parts)
    make_document(make_collection("hostile-txt", owner=user), source="evil.txt", title="Evil text",
                  parts=[p.replace("#", "") for p in parts], media_type="text/plain")
    for slug, source in (("hostile-md", "evil.md"), ("hostile-txt", "evil.txt")):
        reply = answered(user, collection_slug=slug)
        assert {c["document"]["source"] for c in reply.citations} == {source}
        for citation in reply.citations:
            html = alice.get(reverse("chat:passage", args=[reply.pk, citation["n"]])).content.decode()
            assert_inert(html)
            assert "thirty seconds by default" in html
        assert_inert(alice.get(reply.conversation.get_absolute_url()).content.decode())


def test_hostile_llm_answer_is_sanitized(alice, corpus, fake_llm):
    # One supported sentence, so the answer is shown (an answer no source supports is replaced by quotes).
    fake_llm.reply = lambda request: ("The request timeout is thirty seconds by default [1]. "
                                      "Look [1] <img src=x onerror=alert(1)><script>alert(2)</script>"
                                      "[x](javascript:alert(3)) <a href=\"https://ok.example\" onclick=\"a()\">ok</a>")
    response = alice.post(reverse("chat:ask"), {"question": "What is the timeout?"},
                          HTTP_ACCEPT="text/event-stream")
    done = sse_events(response)[-1][1]["html"].lower()
    page = alice.get(Conversation.objects.get().get_absolute_url()).content.decode().lower()
    for html in (done, page):
        assert_inert(html)
        assert '<a href="https://ok.example" rel="noopener noreferrer">ok</a>' in html


@pytest.mark.django_db(transaction=True)  # the request's end closes the connection, as in production
def test_client_leaving_mid_stream_keeps_the_partial_answer(alice, corpus, fake_llm):
    fake_llm.reply = lambda request: "alpha beta gamma delta epsilon zeta"
    response = alice.post(reverse("chat:ask"), {"question": "What is the timeout?"}, HTTP_ACCEPT="text/event-stream")
    chunks = iter(response.streaming_content)
    received = b""
    while received.count(b"event: token") < 2:
        received += next(chunks)
    response.close()  # what the WSGI server does when the browser disconnects (closes the DB connection too)
    reply = Message.objects.get(role="assistant")
    assert reply.status == "stopped" and reply.content == "alpha beta"


def test_asking_again_continues_the_conversation(alice, corpus, no_llm):
    alice.post(reverse("chat:ask"), {"question": "What is the default request timeout?"})
    conversation = Conversation.objects.get()
    alice.post(reverse("chat:ask"), {"question": "How are failed requests retried?",
                                     "conversation": conversation.pk})
    assert Conversation.objects.count() == 1
    assert list(conversation.messages.values_list("role", flat=True)) == ["user", "assistant"] * 2
    html = alice.get(conversation.get_absolute_url()).content.decode()
    assert html.index("What is the default request timeout?") < html.index("How are failed requests retried?")


def test_only_staff_see_the_admin_link(alice, client, django_user_model):
    assert 'href="/admin/"' not in alice.get(reverse("chat:index")).content.decode()
    staff = django_user_model.objects.create_user(username="sam", password="pw-sam-12345", is_staff=True)
    client.force_login(staff)
    html = client.get(reverse("chat:index")).content.decode()
    assert '<a href="/admin/">Admin</a>' in html
    assert '<a href="/"aria-current' not in html and 'aria-current="page">Chat</a>' in html


def test_a_server_error_is_told_with_an_id_that_is_in_the_log(alice, corpus, monkeypatch, caplog):
    def broken(**kwargs):
        raise RuntimeError("database on fire")

    monkeypatch.setattr("chat.views.message_ask", broken)
    response = alice.post(reverse("chat:ask"), {"question": "What is the timeout?"}, HTTP_ACCEPT="text/event-stream")
    body = response.json()
    assert response.status_code == 500 and re.fullmatch(r"[0-9a-f]{8}", body["error_id"])
    assert body["error"].startswith(f"The server failed while answering (error {body['error_id']}).")
    logged = [r for r in caplog.records if body["error_id"] in r.getMessage()]
    assert logged and "database on fire" in logged[0].exc_text
    assert not Conversation.objects.exists()  # the conversation started for it is gone again

    page = alice.post(reverse("chat:ask"), {"question": "What is the timeout?"})
    html = page.content.decode()
    assert page.status_code == 500 and "The server failed while answering (error " in html
    assert re.search(r'<textarea name="question"[^>]*>What is the timeout\?</textarea>', html)


def test_a_failure_while_answering_is_stored_with_an_id(alice, corpus, monkeypatch, caplog):
    def broken(**kwargs):
        raise RuntimeError("index corrupted")

    monkeypatch.setattr("chat.services.prepare", broken)
    alice.post(reverse("chat:ask"), {"question": "What is the timeout?"})
    reply = Message.objects.get(role="assistant")
    error_id = re.search(r"\(error ([0-9a-f]{8})\)", reply.error).group(1)
    assert reply.status == "failed" and reply.error.startswith("The server failed while answering")
    assert any(error_id in r.getMessage() and "index corrupted" in r.exc_text for r in caplog.records)
    assert Message.objects.get(role="user").content == "What is the timeout?"  # the question is kept


def test_a_failure_mid_stream_ends_with_an_error_event(alice, corpus, monkeypatch, fake_llm):
    fake_llm.reply = lambda request: "It is thirty seconds [1]."

    def broken(request, message):
        raise RuntimeError("template missing")

    monkeypatch.setattr("chat.views.render_message", broken)
    response = alice.post(reverse("chat:ask"), {"question": "What is the timeout?"}, HTTP_ACCEPT="text/event-stream")
    events = sse_events(response)
    assert events[0][0] == "start" and events[-1][0] == "error"
    assert events[-1][1]["message"].startswith(f"The server failed while answering (error {events[-1][1]['error_id']})")


def test_the_first_answer_brings_the_new_conversations_head(alice, corpus, no_llm):
    question = "What is the default request timeout when the upstream service is slow and nobody set one?" * 2
    first = sse_events(alice.post(reverse("chat:ask"), {"question": question}, HTTP_ACCEPT="text/event-stream"))
    start = first[0][1]
    conversation = Conversation.objects.get()
    assert start["title"] == question[:80] == conversation.title  # the question, cut to the title's length
    head = BeautifulSoup(start["head"], "html.parser")
    assert head.select_one("h1.conversation-title").text == question[:80]
    assert head.select_one(".conversation-actions form")["action"] == f"/c/{conversation.pk}/rename/"
    assert_inert(start["head"])
    # A follow-up keeps the head as it is (an open Rename panel is not swapped away).
    follow_up = sse_events(alice.post(reverse("chat:ask"), {"question": "And in production?",
                                                            "conversation": conversation.pk},
                                      HTTP_ACCEPT="text/event-stream"))
    assert "head" not in follow_up[0][1] and "title" not in follow_up[0][1]
