"""POST /api/ask/: JSON and streamed answers, citations, errors as JSON."""

import json
import re

import pytest
from rest_framework.test import APIClient

from accounts.services import token_create
from chat.models import Message
from tests.chat.chat_corpus import GUIDE, make_collection, make_document
from tests.chat.fake_openai import is_rewrite_request

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(user):
    collection = make_collection("guides", owner=user)
    return make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
    return client


def test_ask_requires_authentication(corpus):
    response = APIClient().post("/api/ask/", {"question": "hi"}, format="json")
    assert response.status_code == 401 and "detail" in response.json()


def test_ask_returns_extractive_answer_with_citations(api, corpus, no_llm):
    response = api.post("/api/ask/", {"question": "What is the default request timeout?",
                                      "collection": "guides"}, format="json")
    body = response.json()
    assert response.status_code == 200
    assert body["mode"] == "extractive" and body["status"] == "complete" and body["error"] == ""
    assert body["answer"].startswith("- ") and "Extractive" not in body["answer"]  # the quotes only
    first = body["citations"][0]
    assert set(first) == {"n", "document", "start", "end", "text", "page", "url"}
    assert first["n"] == 1 and first["document"] == {"id": corpus.pk, "title": "Deployment guide",
                                                      "source": "deploy.md"}
    assert first["start"] < first["end"] and first["text"] == "".join(GUIDE[first["start"]:first["end"]])
    assert first["url"] == f"/messages/{body['message']}/sources/1/#passage"
    browser = APIClient()
    browser.force_login(corpus.collection.owner)
    assert browser.get(first["url"].split("#")[0]).status_code == 200


def test_ask_continues_a_conversation_with_rewriting(api, corpus, fake_llm):
    fake_llm.reply = lambda r: "retries of failed requests" if is_rewrite_request(r) else "Twice [1]."
    first = api.post("/api/ask/", {"question": "What about requests?"}, format="json").json()
    second = api.post("/api/ask/", {"question": "How often are they retried?",
                                    "conversation": first["conversation"]}, format="json").json()
    assert second["conversation"] == first["conversation"]
    assert (second["answer"], second["mode"], second["query"]) == ("Twice [1].", "llm", "retries of failed requests")


def test_ask_streams_tokens_then_a_final_event(api, corpus, fake_llm):
    fake_llm.reply = lambda r: "Thirty seconds [1]."
    response = api.post("/api/ask/", {"question": "What is the timeout?", "stream": True}, format="json",
                        HTTP_ACCEPT="text/event-stream")
    assert response["Content-Type"].startswith("text/event-stream")
    body = b"".join(response.streaming_content).decode()
    events = [(m.group(1), json.loads(m.group(2))) for m in re.finditer(r"event: (\w+)\ndata: (.*)\n\n", body)]
    kinds = [k for k, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "done" and set(kinds[1:-1]) == {"token"} and len(kinds) > 3
    done = events[-1][1]
    assert done["answer"] == "Thirty seconds [1]." and done["citations"][0]["n"] == 1
    assert "".join(data["text"] for kind, data in events if kind == "token") == done["answer"]


def test_ask_bad_input_is_a_json_400(api, corpus):
    response = api.post("/api/ask/", {"question": "  "}, format="json")
    assert response.status_code == 400 and response.json() == {"question": ["The question is empty."]}
    response = api.post("/api/ask/", {"question": "x", "rse": "bogus"}, format="json")
    assert response.status_code == 400 and "rse" in response.json()
    assert not Message.objects.exists()


def test_ask_unreadable_collection_is_404(api, other_user, corpus):
    make_collection("secret", owner=other_user)
    response = api.post("/api/ask/", {"question": "x", "collection": "secret"}, format="json")
    assert response.status_code == 404
    assert response.json() == {"detail": "No collection 'secret' that you may read."}
    assert not Message.objects.exists()


def test_ask_llm_down_is_502_with_message(api, corpus, settings):
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_MAX_RETRIES = "http://127.0.0.1:9/v1", "m", 0
    response = api.post("/api/ask/", {"question": "What is the timeout?"}, format="json")
    body = response.json()
    assert response.status_code == 502
    assert body["status"] == "failed" and body["error"].startswith("The language model could not be reached")


def test_ask_without_rse_cites_single_chunks(api, corpus, no_llm):
    body = api.post("/api/ask/", {"question": "What is the default request timeout?", "rse": "none"},
                    format="json").json()
    assert body["citations"] and all(c["end"] - c["start"] == 1 for c in body["citations"])
    assert [c["text"] for c in body["citations"]] == [GUIDE[c["start"]] for c in body["citations"]]


def test_ask_off_topic_is_a_200_with_an_empty_answer_and_the_reason(api, corpus, no_llm):
    response = api.post("/api/ask/", {"question": "What is the capital of Mongolia?"}, format="json")
    body = response.json()
    assert response.status_code == 200
    assert (body["answer"], body["citations"]) == ("", [])
    assert body["error"] == "Nothing in the collection “Guides” answers this question."


def test_a_table_row_answers_with_the_readers_confidence(api, user, no_llm):
    collection = make_collection("tools", owner=user)
    header = "| Tool | Store | Count |\n| --- | --- | --- |\n"
    make_document(collection, source="tools.csv", media_type="text/csv", parts=[
        f"{header}| Lawn roller | Shed 3 | 1 |\n| Hedge shears | Shed 1 | 2 |\n\n",
        f"{header}| Leaf rake | Barn | 4 |\n| Soil sieve | Greenhouse | 1 |\n"])
    body = api.post("/api/ask/", {"question": "Where is the lawn roller kept?", "collection": "tools"},
                    format="json").json()
    assert body["status"] == "complete", body
    assert body["answer"].startswith("- Tool: Lawn roller; Store: Shed 3; Count: 1 [1]")
    assert body["confidence"] > 0.8


def test_a_prose_answer_carries_the_readers_rating_of_its_first_quote(api, corpus, no_llm):
    body = api.post("/api/ask/", {"question": "What is the default request timeout?", "collection": "guides"},
                    format="json").json()
    assert body["mode"] == "extractive" and body["answer"].startswith("- The request timeout is thirty seconds")
    assert body["confidence"] >= 0.8 and "may not answer" not in body["answer"]


def test_a_prose_answer_the_reader_doubts_says_so(api, corpus, no_llm):
    body = api.post("/api/ask/", {"question": "Which log levels can the service be set to?",
                                  "collection": "guides"}, format="json").json()
    assert body["status"] == "complete", body
    assert body["answer"].startswith("- Logs are written to standard output")
    assert body["confidence"] < 0.8
    assert body["answer"].endswith("*These passages may not answer your question.*")
