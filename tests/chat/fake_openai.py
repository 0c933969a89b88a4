"""A real HTTP server speaking the OpenAI chat-completions protocol (plain JSON and streamed SSE),
for tests that go through the real `openai` client. It records every request it receives.

    with FakeOpenAI(reply=lambda request: "Answer [1].") as server:
        settings.LLM_BASE_URL = server.base_url
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

Reply = Callable[[dict], str]


def last_user_content(request: dict) -> str:
    return next((m["content"] for m in reversed(request["messages"]) if m["role"] == "user"), "")


def is_rewrite_request(request: dict) -> bool:
    return "standalone" in request["messages"][0]["content"]


def split_tokens(text: str) -> list[str]:
    """Word-sized pieces, spaces kept, the way an LLM streams them."""
    return re.findall(r"\s*\S+", text) or [text]


class FakeOpenAI:
    """Configure behaviour through attributes, before or between requests:

    reply: request → answer text;  token_delay: seconds between streamed pieces;
    status: an HTTP error status to answer with instead;  hang: seconds to wait before answering;
    drop_after: close the connection after this many streamed pieces (a crash mid-answer);
    models: the ids GET /models lists (None: it answers 404), and the only models chat accepts;
    api_key: the one bearer key accepted (None: any), else 401 as OpenAI answers;
    error_message: the message of the error body sent with `status`.
    `requests` holds every chat request (with its "_headers"), `gets` the headers of every GET.
    """

    def __init__(self, reply: Reply | str = "An answer [1].", *, token_delay: float = 0.0) -> None:
        self.reply: Reply = (lambda request: reply) if isinstance(reply, str) else reply
        self.token_delay = token_delay
        self.status: int | None = None
        self.hang = 0.0
        self.drop_after: int | None = None
        self.models: list[str] | None = None
        self.api_key: str | None = None
        self.error_message = "fake failure"
        self.requests: list[dict] = []
        self.gets: list[dict] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # keep test output quiet
                pass

            def _key_refused(self) -> bool:
                if fake.api_key is not None and self.headers.get("Authorization") != f"Bearer {fake.api_key}":
                    self._json(401, {"error": {"message": "Incorrect API key provided.",
                                               "type": "invalid_request_error", "code": "invalid_api_key"}})
                    return True
                return False

            def do_GET(self) -> None:
                fake.gets.append({k.lower(): v for k, v in self.headers.items()})
                if not self.path.rstrip("/").endswith("/models") or fake.models is None:
                    self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                    return
                if not self._key_refused():
                    self._json(200, {"object": "list", "data": [
                        {"id": model, "object": "model", "created": 0, "owned_by": "fake"} for model in fake.models]})

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                request["_headers"] = {k.lower(): v for k, v in self.headers.items()}
                fake.requests.append(request)
                if self._key_refused():
                    return
                if fake.models is not None and request.get("model") not in fake.models:
                    self._json(404, {"error": {"message": f"The model `{request.get('model')}` does not exist.",
                                               "type": "invalid_request_error", "code": "model_not_found"}})
                    return
                if fake.hang:
                    time.sleep(fake.hang)
                if fake.status:
                    self._json(fake.status, {"error": {"message": fake.error_message, "type": "server_error"}})
                    return
                text = fake.reply(request)
                if request.get("stream"):
                    self._stream(request, text)
                else:
                    self._json(200, {
                        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                        "model": request.get("model", "fake"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                     "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    })

            def _json(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, request: dict, text: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                        "model": request.get("model", "fake")}
                try:
                    for i, piece in enumerate(split_tokens(text)):
                        if fake.drop_after is not None and i >= fake.drop_after:
                            self.wfile.flush()
                            self.connection.shutdown(2)  # a crash mid-answer: no [DONE]
                            return
                        delta = {"content": piece} if i else {"role": "assistant", "content": piece}
                        self._event({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
                        time.sleep(fake.token_delay)
                    self._event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading: that is what stop buttons do

            def _event(self, payload: dict) -> None:
                self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
                self.wfile.flush()

        return Handler


@pytest.fixture
def fake_llm(settings):
    """A running FakeOpenAI server with the LLM settings pointing at it (no retries, short timeout)."""
    with FakeOpenAI() as server:
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_MODEL = "fake-model"
        settings.LLM_API_KEY = "test-key"
        settings.LLM_MAX_RETRIES = 0
        settings.LLM_TIMEOUT = 5.0
        yield server


@pytest.fixture
def no_llm(settings, monkeypatch):
    """No LLM at all: none in the settings, and none read from the admin's LLM settings (so tests
    without the database may ask corpus.llm too). Tests of the admin's settings clear the settings
    themselves instead."""
    from corpus import llm

    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""
    monkeypatch.setattr(llm, "stored_config", lambda: llm.NONE)


ENDPOINT_KEY = "sk-test-9c1e5d7b-never-logged"
ENDPOINT_MODELS = ("small-model", "large-model")


@pytest.fixture
def llm_unset(settings):
    """No LLM from the environment and none cached from the admin's LLM settings, before and after
    the test (the stored settings are cached per process): for tests of the admin's LLM settings."""
    from corpus import llm

    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY = "", "", ""
    settings.LLM_TIMEOUT, settings.LLM_MAX_RETRIES = 5.0, 0
    llm.forget_stored()
    yield
    llm.forget_stored()


@pytest.fixture
def llm_endpoint(llm_unset, settings):
    """A FakeOpenAI endpoint as a superuser would enter it in the admin's LLM settings: it lists
    ENDPOINT_MODELS, accepts ENDPOINT_KEY only and replies "OK"; nothing is configured yet. It
    listens on 127.0.0.1, which the operator allows (LLM_PRIVATE_HOSTS), as for a local llama.cpp."""
    settings.LLM_PRIVATE_HOSTS = ["127.0.0.1"]
    with FakeOpenAI(reply="OK") as fake:
        fake.models, fake.api_key = list(ENDPOINT_MODELS), ENDPOINT_KEY
        yield fake
