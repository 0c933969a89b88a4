"""The whole chain on a real PDF (tests/fixtures/files/manual.pdf: running header and footer,
ligatures, headings right above their paragraphs): ingested through the pipeline, asked through
the answer pipeline, the cited sentence's page in the stored citation, POST /api/ask/, /v1 (plain
and streamed) and the passage view, which opens at that sentence."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from accounts.services import token_create
from chat.models import Message
from corpus import services
from corpus.models import Chunk, Collection
from tests.corpus.ingest_helpers import assert_chunks_tile, eager_media  # noqa: F401
from tests.fixtures.files.manual_pdf import FACTS, HEADER

# Made by tests/fixtures/files/manual_pdf.py (fpdf2, DejaVu Sans).
MANUAL = Path(__file__).resolve().parents[1] / "fixtures" / "files" / "manual.pdf"

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_media", "no_llm")]


@pytest.fixture
def manual(user, django_capture_on_commit_callbacks):
    # Chunks of about 150 tokens: the chunk holding a fact starts a page earlier than the fact
    # does, as the sources of a long manual's answers usually do.
    collection = Collection.objects.create(slug="manuals", name="Manuals", owner=user, chunker="recursive",
                                           chunk_size=150, chunk_overlap=0)
    with django_capture_on_commit_callbacks(execute=True):
        document = services.document_ingest(collection=collection, source="manual.pdf",
                                            data=MANUAL.read_bytes(), filename="manual.pdf")
    document.refresh_from_db()
    assert document.status == "ready", document.error
    return document


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
    return client


def _quoted(answer: str, phrase: str) -> None:
    assert phrase in answer, answer


def test_the_stored_text_is_clean(manual):
    text = manual.text
    assert not re.search("[\ufb00-\ufb06]", text)
    assert HEADER not in text and not re.search(r"Page \d of 5", text)
    assert "\n\n3.2 The sync interval\n\nHarbour Sync looks" in text
    # Page offsets still exact: each page starts with its first line.
    assert text[manual.pages[2]:].startswith("Keep a copy of the configuration file")
    assert text[manual.pages[4]:].startswith("5 Offline use")
    assert_chunks_tile(manual)


def test_the_citation_names_the_page_of_the_cited_sentence_everywhere(manual, api, user, client):
    question, phrase, page = FACTS["interval"]
    body = api.post("/api/ask/", {"question": question, "collection": "manuals"}, format="json").json()
    _quoted(body["answer"], phrase)
    assert "3.2 The sync interval" not in body["answer"] and "Version 2.4" not in body["answer"]
    n = int(re.search(re.escape(phrase) + r"[^\[]*\[(\d+)\]", body["answer"]).group(1))
    cited = next(c for c in body["citations"] if c["n"] == n)
    # The segment starts a page before the sentence: the page of the segment would be wrong.
    first_chunk = Chunk.objects.get(document=manual, chunk_index=cited["start"])
    assert first_chunk.page < page
    assert cited["page"] == page

    stored = Message.objects.get(pk=body["message"]).citation(n)
    assert stored["page"] == page

    client.force_login(user)
    html = client.get(cited["url"].split("#")[0]).content.decode()
    assert f'<span class="page">page {page}</span>' in html
    mark = re.search(r'<mark class="passage support" id="passage">(.*?)</mark>', html, re.DOTALL)
    assert phrase.split(" defaults")[0] in mark.group(1)
    # The page break before the highlighted sentence is page 3's.
    assert html.rindex('id="page-', 0, mark.start()) == html.index(f'id="page-{page}"')


def test_v1_citations_name_the_same_page(manual, user, client):
    question, phrase, page = FACTS["interval"]
    key = token_create(user=user)[1]
    request = {"model": "ragweb/manuals", "messages": [{"role": "user", "content": question}]}
    plain = client.post("/v1/chat/completions", json.dumps(request), content_type="application/json",
                        HTTP_AUTHORIZATION=f"Bearer {key}").json()
    content = plain["choices"][0]["message"]["content"]
    _quoted(content, phrase)
    n = int(re.search(re.escape(phrase) + r"[^\[]*\[(\d+)\]", content).group(1))
    assert next(c for c in plain["citations"] if c["n"] == n)["page"] == page

    streamed = client.post("/v1/chat/completions", json.dumps({**request, "stream": True}),
                           content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}")
    events = [json.loads(line[6:]) for line in b"".join(streamed.streaming_content).decode().splitlines()
              if line.startswith("data: {")]
    last = events[-1]["citations"]
    assert next(c for c in last if c["n"] == n)["page"] == page


def test_a_question_in_plain_letters_finds_the_ligature_text(manual, api):
    question, phrase, page = FACTS["configuration"]
    body = api.post("/api/ask/", {"question": question, "collection": "manuals"}, format="json").json()
    _quoted(body["answer"], phrase)
    n = int(re.search(re.escape(phrase) + r"[^\[]*\[(\d+)\]", body["answer"]).group(1))
    assert next(c for c in body["citations"] if c["n"] == n)["page"] == page
    keyword = api.post("/api/search/", {"query": "configuration file", "collection": "manuals", "mode": "keyword",
                                        "k": 3, "rse": None}, format="json").json()
    assert keyword["chunks"] and "configuration file" in keyword["chunks"][0]["text"]
