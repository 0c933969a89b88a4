"""Hostile input to the API and /v1 is refused with a clear 400/413 before any heavy work, never a
500: nested JSON, lone surrogates, NUL bytes, overlong questions, too many or too long messages."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from api import openai as api_openai
from api import openai as v1
from chat import questions
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db
QUESTION = "What is the default request timeout?"


@pytest.fixture
def api(user, no_llm):
    make_document(make_collection("guides", owner=user), source="deploy.md", parts=GUIDE)
    client = APIClient()
    client.force_authenticate(user)
    return client


def post_raw(api, path: str, body: str):
    return api.generic("POST", path, body.encode("utf-8", "surrogatepass"), content_type="application/json")


def v1_body(messages) -> dict:
    return {"model": "ragweb", "messages": messages}


@pytest.mark.parametrize("path", ["/api/search/", "/api/ask/", "/v1/chat/completions"])
def test_deeply_nested_json_is_a_400(api, path):
    response = post_raw(api, path, "[" * 2048)

    assert response.status_code == 400, response.content
    text = json.dumps(response.json())
    assert "nested too deeply" in text and "Traceback" not in text


@pytest.mark.parametrize("path, body", [
    ("/v1/chat/completions", '{"model": "ragweb", "messages": [{"role": "user", "content": "\\ud800"}]}'),
    ("/v1/chat/completions", '{"model": "ragweb", "messages": [{"role": "user", "content": "Why \\udfff?"}]}'),
    ("/api/ask/", '{"question": "timeout \\ud800"}'),
    ("/api/search/", '{"query": "\\ud83d"}'),
])
def test_a_lone_surrogate_is_a_400(api, path, body):
    response = post_raw(api, path, body)

    assert response.status_code == 400, response.content
    assert "lone surrogate" in json.dumps(response.json())


def test_an_escaped_surrogate_pair_is_text(api):
    response = post_raw(api, "/api/search/", '{"query": "timeout \\ud83d\\ude00"}')

    assert response.status_code == 200, response.content


@pytest.fixture
def validations(monkeypatch) -> list[int]:
    """How many messages each ChatCompletionInput was given: the costly per-message validation."""
    seen: list[int] = []
    original = api_openai.ChatCompletionInput.__init__

    def spy(self, *args, data=None, **kwargs):
        seen.append(len(data.get("messages") or []))
        original(self, *args, data=data, **kwargs)

    monkeypatch.setattr(api_openai.ChatCompletionInput, "__init__", spy)
    return seen


def test_v1_refuses_too_many_messages_before_validating_them(api, settings, validations, monkeypatch):
    monkeypatch.setattr(v1, "V1_MAX_MESSAGES", 50)
    messages = [{"role": "user", "content": "word"} for _ in range(51)]

    response = api.post("/v1/chat/completions", v1_body(messages), format="json")

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "too_many_messages" and error["param"] == "messages"
    assert error["message"].startswith("Send at most 50 messages (this request has 51)")
    assert validations == []  # validating 200,000 messages took ~3.7 s and kept its memory


def test_v1_reads_only_the_turns_the_answer_uses(api, validations, fake_llm):
    from tests.chat.fake_openai import is_rewrite_request

    fake_llm.reply = lambda r: "request timeout" if is_rewrite_request(r) else "Thirty seconds [1]."
    old = [{"role": "bogus", "content": 5}] + [{"role": "user", "content": f"Old turn {i}."} for i in range(300)]
    recent = [{"role": "system", "content": "Be brief."}, {"role": "assistant", "content": "   "}]
    recent += [{"role": "user" if i % 2 else "assistant", "content": f"Recent turn {i}."} for i in range(6)]

    response = api.post("/v1/chat/completions", v1_body([*old, *recent, {"role": "user", "content": QUESTION}]),
                        format="json")

    assert response.status_code == 200, response.content
    assert validations == [7]  # the question and the 6 turns of history, not 310 messages
    rewrite = next(r for r in fake_llm.requests if is_rewrite_request(r))
    prompt = " ".join(str(m["content"]) for m in rewrite["messages"])
    assert all(f"Recent turn {i}." in prompt for i in range(6)) and "Old turn" not in prompt


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/api/search/", "/api/ask/"])
def test_a_json_body_over_the_cap_is_a_413_before_it_is_parsed(api, path, monkeypatch):
    parsed = []
    monkeypatch.setattr("rest_framework.parsers.json.load", lambda *a, **k: parsed.append(1))
    messages = [{"role": "user", "content": "word"} for _ in range(200_000)]  # 7 MB, under the 10 MB body cap

    response = api.post(path, {**v1_body(messages), "query": "x", "question": "x"}, format="json")

    assert response.status_code == 413, response.content
    body = response.json()
    message = f"The JSON body is over {1024 * 1024} bytes (API_MAX_JSON_BYTES)."
    if path.startswith("/v1/"):
        assert body["error"]["code"] == "request_too_large" and body["error"]["message"] == message
    else:
        assert body == {"detail": message}
    assert parsed == []


def test_v1_within_the_limits_is_answered(api, settings, validations, monkeypatch):
    monkeypatch.setattr(v1, "V1_MAX_MESSAGES", 3)
    messages = [{"role": "user", "content": "Tell me about deployment."},
                {"role": "assistant", "content": "It is described in the guide."},
                {"role": "user", "content": QUESTION}]

    response = api.post("/v1/chat/completions", v1_body(messages), format="json")

    assert response.status_code == 200, response.content
    assert "thirty seconds" in response.json()["choices"][0]["message"]["content"]
    assert validations == [3]


@pytest.mark.parametrize("question, message", [
    ("x" * 2001, "The question is longer than 2000 characters."),
    ("timeout\x00", "The question contains a NUL character."),
])
def test_the_question_check_is_the_same_on_api_ask_and_v1(api, question, message):
    ask = api.post("/api/ask/", {"question": question}, format="json")
    v1 = api.post("/v1/chat/completions", v1_body([{"role": "user", "content": question}]), format="json")

    assert ask.status_code == 400 and ask.json() == {"question": [message]}
    assert v1.status_code == 400 and v1.json()["error"]["message"] == f"messages: {message}"


def test_the_question_cap_is_a_setting(api, settings, monkeypatch):
    monkeypatch.setattr(questions, "MAX_QUESTION_CHARS", 10)

    response = api.post("/api/ask/", {"question": "What is the timeout?"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"question": ["The question is longer than 10 characters."]}


HOSTILE_GUIDE = [
    "# Deployment guide\n\nThis guide explains how to deploy the service on one machine.\n\n",
    "## Request timeout\n\nThe request timeout is thirty seconds by default "
    '<script>alert("x")</script><img src=x onerror=alert(1)> [see more](javascript:alert(2)).\n\n',
    "## Logging\n\nLogs are written to standard output in JSON lines format.\n\n",
]


@pytest.mark.parametrize("stream", [False, True])
def test_v1_gives_the_sanitised_text_the_chat_shows(user, no_llm, stream):
    make_document(make_collection("guides", owner=user), source="deploy.md", parts=HOSTILE_GUIDE)
    client = APIClient()
    client.force_authenticate(user)

    response = client.post("/v1/chat/completions", {**v1_body([{"role": "user", "content": QUESTION}]),
                                                    "stream": stream}, format="json")

    assert response.status_code == 200
    if stream:
        events = [json.loads(line[6:]) for line in b"".join(response.streaming_content).decode().splitlines()
                  if line.startswith("data: {")]
        content = "".join(e["choices"][0]["delta"].get("content", "") for e in events)
    else:
        content = response.json()["choices"][0]["message"]["content"]
    assert "thirty seconds by default" in content and "[1]" in content
    assert "<script" not in content and "<img" not in content and "](javascript:" not in content
    # A link to anything but an absolute http(s) or mailto address is quoted as its words.
    assert "see more. [1]" in content and "javascript" not in content
