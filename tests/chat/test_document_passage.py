"""The passage of a document by character range (/passages/<id>/?start=&end=), the page search
results link to: highlighted for a reader, 404 for anyone else, 400 for a bad range."""

from __future__ import annotations

import re

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


def _lines(first: int, count: int) -> str:
    return "".join(f"line {n:06d} of the long manual.\n" for n in range(first, first + count))


@pytest.fixture
def manual(db, user):
    """A long plain-text document (~330,000 characters) with a passage in its middle."""
    before, after = _lines(0, 5000), _lines(10000, 5000)
    passage = "The pressure valve must be opened slowly.\n"
    return make_document(make_collection("manuals", owner=user), source="manual.txt", parts=[before, passage, after],
                         media_type="text/plain"), len(before), len(before) + len(passage)


def test_the_passage_page_renders_a_window_around_the_passage_and_pages_the_rest(manual, user):
    from chat.passages import PART_CHARS

    document, start, end = manual
    response = page(user, f"/passages/{document.pk}/?start={start}&end={end}")
    html = response.content.decode()
    assert response.status_code == 200
    assert '<mark class="passage segment" id="passage">The pressure valve must be opened slowly.\n</mark>' in html
    assert len(html) < PART_CHARS * 1.5 < len(document.text)  # not the whole document
    assert "line 004999" in html and "line 010000" in html  # the text right around it
    assert "line 000000" not in html and "line 014999" not in html  # not the far ends
    earlier = re.search(r'<a href="\?([^"]+)" rel="prev">', html).group(1).replace("&amp;", "&")
    later = re.search(r'<a href="\?([^"]+)" rel="next">', html).group(1).replace("&amp;", "&")

    first = page(user, f"/passages/{document.pk}/?{earlier}").content.decode()
    assert "line 000000" in first or 'rel="prev"' in first  # an earlier part, reached from the window
    beginning = page(user, f"/passages/{document.pk}/?start={start}&end={end}&part=0").content.decode()
    assert "line 000000" in beginning and 'id="passage"' not in beginning and 'rel="prev"' not in beginning
    assert "Back to the passage" in beginning
    last = page(user, f"/passages/{document.pk}/?start={start}&end={end}&part=999").content.decode()
    assert "line 014999" in last and 'rel="next"' not in last  # clamped to the last part
    assert "line 01" in page(user, f"/passages/{document.pk}/?{later}").content.decode()


def test_the_parts_of_a_document_tile_it_at_line_starts(manual):
    from chat.passages import Highlight, parts, window_for

    document, start, end = manual
    text = document.text
    windows = [window_for(text, Highlight((start, end), ()), n) for n in range(parts(text))]
    assert windows[0].start == 0 and windows[-1].end == len(text)
    assert all(a.end == b.start for a, b in zip(windows, windows[1:], strict=False))
    assert all(w.start == 0 or text[w.start - 1] == "\n" for w in windows)


def test_the_passage_pages_are_rate_limited_per_user(bread, user, other_user, monkeypatch):
    from django.core.cache import caches

    from chat.passages import PassageQuota

    monkeypatch.setattr(PassageQuota, "rate", "3/min")
    caches["quotas"].clear()
    answers = [page(user, f"/passages/{bread.pk}/?start=0&end=5").status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]
    refused = page(user, f"/passages/{bread.pk}/?start=0&end=5")
    assert int(refused["Retry-After"]) > 0
    caches["quotas"].clear()
