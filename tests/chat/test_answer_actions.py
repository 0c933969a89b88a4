"""Actions on an answer: the copy text, regenerate (streamed and not), and rating it."""

import html as html_lib
import json
import re

import pytest
from django.urls import reverse

from chat.models import Feedback, Message
from chat.services import CannotRegenerate, conversation_start, message_ask, message_regenerate
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db
QUESTION = "What is the default request timeout?"


@pytest.fixture
def corpus(user):
    collection = make_collection("guides", owner=user)
    return make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)


@pytest.fixture
def alice(client, user):
    client.force_login(user)
    return client


def answered(user, question=QUESTION, conversation=None, **kwargs) -> Message:
    conversation = conversation or conversation_start(user=user)
    return list(message_ask(conversation=conversation, question=question, stream=False, **kwargs))[-1].message


def sse_events(response) -> list[tuple[str, dict]]:
    body = b"".join(response.streaming_content).decode()
    return [(m.group(1), json.loads(m.group(2))) for m in re.finditer(r"event: (\w+)\ndata: (.*)\n\n", body)]


def test_copy_text_is_the_answer_with_its_sources(alice, user, corpus, no_llm):
    reply = answered(user)
    page = alice.get(reply.conversation.get_absolute_url()).content.decode()
    copy = html_lib.unescape(re.search(r'<template class="copy-text">(.*?)</template>', page, re.S).group(1))
    answer, sources = copy.split("\n\nSources:\n\n")
    assert answer == reply.content.strip()
    assert re.fullmatch(r"(- \[\d+\] \[Deployment guide\]\(http://testserver/messages/\d+/sources/\d+/#passage\) "
                        r"— `deploy.md`, chunks? [\d–]+\n?)+", sources)


def test_regenerate_replaces_the_latest_question_and_answer(user, corpus, fake_llm):
    fake_llm.reply = lambda request: "First try [1]."
    old = answered(user)
    conversation = old.conversation
    fake_llm.reply = lambda request: "Second try [1]."
    new = list(message_regenerate(message=old, stream=False))[-1].message
    assert new.content == "Second try [1]." and new.status == "complete"
    assert list(conversation.messages.values_list("role", "content")) == [("user", QUESTION),
                                                                          ("assistant", "Second try [1].")]
    assert not Message.objects.filter(pk=old.pk).exists()


def test_regenerate_sees_only_the_conversation_before_it(user, corpus, fake_llm):
    fake_llm.reply = lambda request: "An answer [1]."
    first = answered(user, "How are failed requests retried?")
    second = answered(user, conversation=first.conversation)
    with pytest.raises(CannotRegenerate, match="Only the latest answer"):
        next(message_regenerate(message=first))
    fake_llm.requests.clear()
    list(message_regenerate(message=second, stream=False))
    answer_request = [r for r in fake_llm.requests if QUESTION in json.dumps(r["messages"])][-1]
    history = json.dumps(answer_request["messages"])
    assert "How are failed requests retried?" in history and history.count(QUESTION) >= 1
    assert history.count("An answer [1].") == 1  # the first answer only, not the replaced one


def test_regenerate_refuses_an_answer_being_written(user):
    conversation = conversation_start(user=user)
    Message.objects.create(conversation=conversation, role="user", content=QUESTION)
    running = Message.objects.create(conversation=conversation, role="assistant", status="streaming")
    with pytest.raises(CannotRegenerate, match="still being written"):
        next(message_regenerate(message=running))
    assert conversation.messages.count() == 2


def test_regenerate_without_js_redirects_to_the_new_answer(alice, user, corpus, no_llm):
    old = answered(user)
    response = alice.post(reverse("chat:ask"), {"regenerate": old.pk, "conversation": old.conversation_id})
    new = Message.objects.get(role="assistant")
    assert new.pk != old.pk and new.status == "complete"
    assert response.status_code == 302 and response["Location"] == f"/c/{old.conversation_id}/#m{new.pk}"


def test_regenerate_streams_like_a_question(alice, user, corpus, fake_llm):
    fake_llm.reply = lambda request: "Old [1]."
    old = answered(user)
    fake_llm.reply = lambda request: "New answer [1]."
    response = alice.post(reverse("chat:ask"), {"regenerate": old.pk, "question": QUESTION},
                          HTTP_ACCEPT="text/event-stream")
    events = sse_events(response)
    assert events[0][0] == "start" and events[-1][0] == "done"
    assert "".join(d["text"] for kind, d in events if kind == "token") == "New answer [1]."
    assert 'name="regenerate"' in events[-1][1]["html"]  # the new answer can be regenerated in turn


def test_regenerate_only_own_latest_answers(alice, user, other_user, corpus, no_llm):
    theirs = answered(other_user, conversation=conversation_start(user=other_user))
    assert alice.post(reverse("chat:ask"), {"regenerate": theirs.pk}).status_code == 404
    mine = answered(user)
    answered(user, conversation=mine.conversation)
    response = alice.post(reverse("chat:ask"), {"regenerate": mine.pk}, follow=True)
    assert "Only the latest answer of a conversation can be regenerated." in response.content.decode()
    streamed = alice.post(reverse("chat:ask"), {"regenerate": mine.pk}, HTTP_ACCEPT="text/event-stream")
    assert sse_events(streamed) == [("notice", {"message": "Only the latest answer of a conversation can be "
                                                           "regenerated."})]
    assert Message.objects.filter(conversation=mine.conversation).count() == 4


def test_only_the_latest_answer_offers_regenerate(alice, user, corpus, no_llm):
    first = answered(user)
    second = answered(user, conversation=first.conversation)
    page = alice.get(first.conversation.get_absolute_url()).content.decode()
    assert re.findall(r'name="regenerate" value="(\d+)"', page) == [str(second.pk)]


def test_rating_keeps_a_copy_and_can_be_taken_back(alice, user, corpus, no_llm):
    reply = answered(user)
    response = alice.post(reverse("chat:feedback", args=[reply.pk]), {"rating": "down"})
    assert response.status_code == 302
    assert response["Location"] == f"{reply.conversation.get_absolute_url()}?feedback={reply.pk}#m{reply.pk}"
    feedback = Feedback.objects.get()
    assert (feedback.rating, feedback.question, feedback.answer, feedback.user) == ("down", QUESTION, reply.content,
                                                                                   user)
    assert feedback.sources == reply.citations and feedback.cited and feedback.query == QUESTION
    assert feedback.retrieved == reply.relevance and feedback.retrieved
    page = alice.get(response["Location"]).content.decode()
    assert '<details class="feedback-details" open>' in page
    assert re.search(r'value="clear" class="thumb down"\s+aria-pressed="true"', page)
    alice.post(reverse("chat:feedback", args=[reply.pk]), {"rating": "up"})
    assert Feedback.objects.get().rating == "up"
    alice.post(reverse("chat:feedback", args=[reply.pk]), {"rating": "clear"})
    assert not Feedback.objects.exists()


def test_rating_details_through_htmx(alice, user, corpus, no_llm):
    reply = answered(user)
    url = reverse("chat:feedback", args=[reply.pk])
    first = alice.post(url, {"rating": "down"}, HTTP_HX_REQUEST="true")
    assert first.content.decode().strip().startswith(f'<div class="answer-actions" id="actions-{reply.pk}">')
    n = next(c["n"] for c in reply.citations if c["document"]["source"] == "deploy.md")
    bad = alice.post(url, {"rating": "down", "details": "1", "comment": "Wrong part.", "source": str(n),
                           "evidence": "the timeout is ninety minutes"}, HTTP_HX_REQUEST="true")
    html = bad.content.decode()
    assert bad.status_code == 200 and f"is not in source [{n}]" in html
    assert "the timeout is ninety minutes</textarea>" in html  # what was typed is kept
    good = alice.post(url, {"rating": "down", "details": "1", "comment": "Wrong part.", "source": str(n),
                            "evidence": "The request timeout is thirty seconds by default.\n\n"},
                      HTTP_HX_REQUEST="true")
    assert "Thanks, saved." in good.content.decode()
    feedback = Feedback.objects.get()
    assert (feedback.comment, feedback.source, feedback.evidence) == (
        "Wrong part.", "deploy.md", ["The request timeout is thirty seconds by default."])


def test_only_the_owner_rates(alice, other_user, corpus, no_llm):
    theirs = answered(other_user)
    assert alice.post(reverse("chat:feedback", args=[theirs.pk]), {"rating": "up"}).status_code == 404
    assert not Feedback.objects.exists()


def test_a_rating_outlives_its_answer(user, corpus, no_llm):
    from chat.feedback import feedback_rate

    reply = answered(user)
    feedback_rate(message=reply, user=user, rating="up")
    list(message_regenerate(message=reply, stream=False))
    feedback = Feedback.objects.get()
    assert feedback.message is None and feedback.answer == reply.content
    reply.conversation.delete()
    assert Feedback.objects.get().question == QUESTION


def test_rating_names_another_readable_document_from_the_page(alice, user, other_user, corpus, no_llm):
    from tests.chat.chat_corpus import COOKING

    bread = make_document(corpus.collection, source="bread.md", title="Bread", parts=COOKING)
    hidden = make_document(make_collection("secret", owner=other_user), source="plans.md", parts=COOKING)
    reply = answered(user, collection_slug="guides")
    url = reverse("chat:feedback", args=[reply.pk])
    page = alice.post(url, {"rating": "down"}, HTTP_HX_REQUEST="true").content.decode()
    assert f'<option value="{bread.pk}"' in page and "plans.md" not in page
    saved = alice.post(url, {"rating": "down", "details": "1", "source": "other", "document": str(bread.pk),
                             "evidence": "Bake the loaf"}, HTTP_HX_REQUEST="true")
    assert "Thanks, saved." in saved.content.decode()
    assert (Feedback.objects.get().source, Feedback.objects.get().evidence) == ("bread.md", ["Bake the loaf"])
    refused = alice.post(url, {"rating": "down", "details": "1", "source": "other", "document": str(hidden.pk),
                               "evidence": "Bake the loaf"}, HTTP_HX_REQUEST="true")
    assert f"No document {hidden.pk} that you may read" in refused.content.decode()
    assert Feedback.objects.get().source == "bread.md"
