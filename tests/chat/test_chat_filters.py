"""The chat page's filter control: its fields narrow the answer's search (a document outside the
filter is never cited), the answer keeps the filters it was searched with (shown on it, restored in
the form), regenerating it searches with them again, and bad filters are a 400 with a message."""

import pytest
from django.urls import reverse

from chat.models import Message
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db
QUESTION = "What is the default request timeout?"
PDF = "application/pdf"


@pytest.fixture
def twins(user):
    """The same guide twice: as Markdown and as a PDF in another folder, so either can answer."""
    collection = make_collection("guides", owner=user)
    markdown = make_document(collection, source="notes/deploy.md", title="Deployment notes", parts=GUIDE)
    pdf = make_document(collection, source="manuals/deploy.pdf", title="Deployment manual", parts=GUIDE,
                        media_type=PDF)
    return markdown, pdf


@pytest.fixture
def alice(client, user):
    client.force_login(user)
    return client


def cited_documents(message: Message) -> set[int]:
    return {c["document"]["id"] for c in message.citations}


def test_the_form_filters_narrow_the_search_and_stay_on_the_answer(alice, twins, no_llm):
    markdown, pdf = twins

    response = alice.post(reverse("chat:ask"), {"question": QUESTION, "media_type": [PDF]})

    answer = Message.objects.get(role="assistant")
    assert response.status_code == 302
    assert answer.status == "complete" and answer.filters == {"media_type": [PDF]}
    assert cited_documents(answer) == {pdf.pk}
    page = alice.get(answer.conversation.get_absolute_url()).content.decode()
    assert "Searched only: PDF" in page
    assert f'value="{PDF}" checked' in page  # the control starts as the latest answer was filtered


def test_a_source_prefix_and_tags_reach_the_search(alice, twins, no_llm):
    markdown, pdf = twins
    markdown.metadata = {"tags": ["ops"]}
    markdown.save(update_fields=["metadata"])

    alice.post(reverse("chat:ask"), {"question": QUESTION, "source_prefix": "notes/", "tags": "ops, unused"})

    answer = Message.objects.get(role="assistant")
    assert answer.filters == {"tags": ["ops", "unused"], "source_prefix": "notes/"}
    assert cited_documents(answer) == {markdown.pk}


def test_regenerate_searches_with_the_filters_of_the_original_question(alice, twins, no_llm):
    markdown, pdf = twins
    alice.post(reverse("chat:ask"), {"question": QUESTION, "source_prefix": "manuals/"})
    old = Message.objects.get(role="assistant")

    # The Regenerate button posts no filter fields: the answer's own are used.
    alice.post(reverse("chat:ask"), {"regenerate": old.pk, "conversation": old.conversation_id})

    new = Message.objects.get(role="assistant")
    assert new.pk != old.pk
    assert new.filters == {"source_prefix": "manuals/"}
    assert cited_documents(new) == {pdf.pk}


def test_bad_filters_are_refused_with_a_message_before_anything_is_stored(alice, twins, no_llm):
    response = alice.post(reverse("chat:ask"), {"question": QUESTION, "after": "2025-01-01", "before": "2024-01-01"},
                          HTTP_ACCEPT="text/event-stream")

    assert response.status_code == 400
    assert response.json() == {"error": "Filters: before must be a later day than after."}
    assert not Message.objects.exists()
    page = alice.post(reverse("chat:ask"), {"question": QUESTION, "after": "yesterday"})
    assert page.status_code == 400 and "Filters: " in page.content.decode()


def test_not_found_under_filters_says_which_filters_applied(alice, twins, no_llm):
    alice.post(reverse("chat:ask"), {"question": QUESTION, "source_prefix": "archive/", "tags": "ops"})

    answer = Message.objects.get(role="assistant")
    assert answer.status == "not_found"
    assert "(only documents tagged ops, whose source starts with \"archive/\")" in answer.error


def test_the_filters_in_words():
    from datetime import date

    from chat.retrieval.filters import NO_FILTERS, SearchFilters

    assert NO_FILTERS.described() == ""
    assert SearchFilters(media_types=(PDF,), after=date(2024, 1, 1), before=date(2025, 1, 1)).described() == (
        "documents of type application/pdf, dated on or after 2024-01-01 and before 2025-01-01")
