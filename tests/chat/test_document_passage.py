"""The passage of a document by character range (/passages/<id>/?start=&end=), the page search
results link to: highlighted for a reader, 404 for anyone else, 400 for a bad range."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.chat.chat_corpus import COOKING, make_collection, make_document


@pytest.fixture
def bread(db, user):
    return make_document(make_collection("kitchen", owner=user), source="bread.txt", parts=COOKING,
                         media_type="text/plain")


def page(user, url: str):
    client = Client()
    if user is not None:
        client.force_login(user)
    return client.get(url)


def test_it_highlights_the_range_for_a_reader(bread, user):
    start = len(COOKING[0])
    response = page(user, f"/passages/{bread.pk}/?start={start}&end={start + len(COOKING[1])}")
    assert response.status_code == 200
    assert f'<mark class="passage segment" id="passage">{COOKING[1]}</mark>' in response.content.decode()


def test_it_is_404_for_a_user_who_may_not_read_the_document(bread, other_user):
    assert page(other_user, f"/passages/{bread.pk}/?start=0&end=5").status_code == 404
    assert page(None, f"/passages/{bread.pk}/?start=0&end=5").status_code == 302  # to the sign-in page


@pytest.mark.parametrize("query", ["", "?start=5&end=5", "?start=a&end=9", "?start=-1&end=4", "?start=9999&end=10000"])
def test_it_refuses_a_bad_range_with_a_message(bread, user, query):
    response = page(user, f"/passages/{bread.pk}/{query}")
    assert response.status_code == 400 and b"character offsets" in response.content
