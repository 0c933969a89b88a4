"""Hostile input to the chat page: numbers in other scripts ("²") are not ids, a question has the
cap and characters every way of asking shares (400, nothing stored), asking is throttled like the
API (429), and a NUL in a title is said as such. Never a 500."""

import pytest
from django.core.cache import caches
from django.urls import reverse

from chat import questions
from chat.models import Conversation, Feedback, Message
from chat.services import conversation_start, message_ask
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db
QUESTION = "What is the default request timeout?"
STREAM = {"HTTP_ACCEPT": "text/event-stream"}


@pytest.fixture
def corpus(user):
    return make_document(make_collection("guides", owner=user), source="deploy.md", parts=GUIDE)


@pytest.fixture
def alice(client, user, no_llm):
    client.force_login(user)
    return client


def answered(user) -> Message:
    conversation = conversation_start(user=user)
    return list(message_ask(conversation=conversation, question=QUESTION, stream=False))[-1].message


@pytest.mark.parametrize("field", ["conversation", "regenerate"])
@pytest.mark.parametrize("value", ["²", "①", "9" * 30])
def test_an_id_that_is_not_a_plain_number_is_a_404(alice, corpus, field, value):
    response = alice.post(reverse("chat:ask"), {"question": QUESTION, field: value})

    assert response.status_code == 404


def test_a_feedback_source_that_is_not_a_plain_number_is_no_source(alice, user, corpus):
    reply = answered(user)

    response = alice.post(reverse("chat:feedback", args=[reply.pk]),
                          {"rating": "down", "details": "1", "source": "²", "comment": "Wrong page."})

    assert response.status_code == 302
    feedback = Feedback.objects.get()
    assert (feedback.comment, feedback.source, feedback.evidence) == ("Wrong page.", "", [])


@pytest.mark.parametrize("question, message", [
    ("x" * 2001, "The question is longer than 2000 characters."),
    ("Why\x00 not?", "The question contains a NUL character."),
])
def test_a_bad_question_is_a_400_and_nothing_is_stored(alice, corpus, question, message):
    page = alice.post(reverse("chat:ask"), {"question": question})
    streamed = alice.post(reverse("chat:ask"), {"question": question}, **STREAM)

    assert page.status_code == 400 and message in page.content.decode()
    assert question not in page.content.decode()
    assert streamed.status_code == 400 and streamed.json() == {"error": message}
    assert not Message.objects.exists() and not Conversation.objects.exists()


def test_the_page_caps_the_question_box(alice, settings, monkeypatch):
    monkeypatch.setattr(questions, "MAX_QUESTION_CHARS", 300)

    assert 'maxlength="300"' in alice.get(reverse("chat:index")).content.decode()


def test_asking_from_the_page_is_throttled_with_the_api(alice, user, corpus, settings):
    settings.API_THROTTLE_RATES = {"search": None, "ask": "2/hour"}
    caches["quotas"].clear()
    try:
        assert alice.post(reverse("chat:ask"), {"question": QUESTION}).status_code == 302
        assert alice.post("/api/ask/", {"question": QUESTION}, content_type="application/json").status_code == 200

        page = alice.post(reverse("chat:ask"), {"question": QUESTION})
        streamed = alice.post(reverse("chat:ask"), {"question": QUESTION}, **STREAM)
        regenerate = alice.post(reverse("chat:ask"), {"regenerate": Message.objects.filter(role="assistant")
                                                      .latest("id").pk})
    finally:
        caches["quotas"].clear()

    assert page.status_code == 429 and 0 < int(page["Retry-After"]) <= 3600
    assert "Too many questions: try again in" in page.content.decode()
    assert streamed.status_code == 429 and streamed.json()["error"].startswith("Too many questions: try again in")
    assert regenerate.status_code == 429
    assert Message.objects.filter(role="user").count() == 2


def test_a_nul_in_a_title_is_said_as_such(alice, user):
    conversation = conversation_start(user=user, title="Old title")

    response = alice.post(reverse("chat:rename", args=[conversation.pk]), {"title": "New\x00title"}, follow=True)

    assert response.status_code == 200
    assert "The title contains a NUL character." in response.content.decode()
    conversation.refresh_from_db()
    assert conversation.title == "Old title"


def test_a_nul_in_a_search_of_conversations_is_said_as_such(alice):
    response = alice.get(reverse("chat:index"), {"q": "a\x00b"})

    assert response.status_code == 400
    assert "contains a NUL character" in response.content.decode()


def test_a_nul_in_the_collection_of_a_question_is_a_400(alice, corpus):
    response = alice.post(reverse("chat:ask"), {"question": QUESTION, "collection": "guides\x00"})

    assert response.status_code == 400
    assert "contains a NUL character" in response.content.decode()
