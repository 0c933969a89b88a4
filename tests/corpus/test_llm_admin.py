"""The admin's LLM settings page: superusers only, the key write-only and sent only to the URL it
was saved with, the model list from /models, the environment's precedence shown, a Test button
whose every failure reads in plain words of our own (never the endpoint's), tests and changes
audited, and the key in no log line."""

from __future__ import annotations

import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import Client

from audit.models import Action, AuditEvent
from corpus import llm
from corpus.models import LLMSettings
from tests.chat.fake_openai import ENDPOINT_KEY

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("llm_unset")]

URL = "/admin/corpus/llmsettings/"
KEY = ENDPOINT_KEY


@pytest.fixture
def staff(django_user_model, llm_unset, settings):
    """A superuser: who may configure the LLM."""
    settings.LLM_TIMEOUT = 2.0
    user = django_user_model.objects.create_user("sam", password="sam-password-1", is_staff=True,
                                                 is_superuser=True)
    client = Client()
    client.force_login(user)
    client.user = user
    return client


@pytest.fixture
def server(llm_endpoint):
    return llm_endpoint


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_it_refuses_users_who_are_not_staff(client, user):
    client.force_login(user)
    response = client.get(URL)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert client.post(URL, {"base_url": "http://x.example/v1", "model": "m", "_save": "1"}).status_code == 302
    assert not LLMSettings.objects.exists()


def test_saving_stores_the_key_never_shows_it_and_is_audited(staff, server):
    response = staff.post(URL, {"base_url": server.base_url, "model": "small-model", "new_api_key": KEY,
                                "_save": "Save"})
    assert response.status_code == 302
    page = staff.get(URL)
    html = page.content.decode()
    assert KEY not in html
    assert '<strong id="llm-key-state">set</strong>' in html
    assert "Answers are written by <strong>small-model</strong>" in html and "set on this page" in html
    # The model field offers what the endpoint lists.
    assert '<option value="large-model">' in html and '<option value="small-model">' in html
    event = AuditEvent.objects.get(action=Action.LLM_CONFIG_CHANGED)
    assert event.actor == staff.user
    assert event.detail["changed"] == ["base URL", "model", "API key replaced"]
    assert KEY not in str(event.detail)


def test_the_model_is_free_text_when_the_endpoint_lists_none(staff, server):
    server.models = None  # GET /models answers 404
    staff.post(URL, {"base_url": server.base_url, "model": "typed-model", "_save": "Save"})
    html = staff.get(URL).content.decode()
    assert '<datalist id="llm-models"></datalist>' in html and 'value="typed-model"' in html


def test_the_page_says_when_the_environment_wins(staff, settings):
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://127.0.0.1:9/v1", "env-model"
    html = staff.get(URL).content.decode()
    assert "LLM_BASE_URL is set in the environment" in html
    assert "Answers are written by <strong>env-model</strong>" in html and "from the environment" in html


def test_the_page_is_read_only_while_the_environment_sets_the_llm(staff, server, settings):
    staff.post(URL, {"base_url": server.base_url, "model": "small-model", "new_api_key": KEY, "_save": "Save"})
    saved = LLMSettings.objects.get()
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY = "http://127.0.0.1:9/v1", "env-model", "env-key"
    page = staff.get(URL)
    html = page.content.decode()
    assert page.status_code == 200 and 'id="llm-locked"' in html
    # The environment's LLM in disabled fields, no Save or Test, no key typed or shown.
    form = page.context["form"]
    assert all(field.disabled for field in form.fields.values())
    assert form["base_url"].value() == "http://127.0.0.1:9/v1" and form["model"].value() == "env-model"
    assert 'name="_save"' not in html and 'name="_test"' not in html
    assert '<strong id="llm-key-state">set</strong>' in html and "env-key" not in html
    # A POST (a page opened before the lock, or crafted) saves and tests nothing.
    calls_before = (len(server.requests), len(server.gets))
    for button in ("_save", "_test"):
        response = staff.post(URL, {"base_url": server.base_url, "model": "other-model", "new_api_key": "k2",
                                    button: "1"})
        assert response.status_code == 403
        assert any("this page is read-only" in m for m in messages_of(response))
    assert (len(server.requests), len(server.gets)) == calls_before
    row = LLMSettings.objects.get()
    assert (row.base_url, row.model, row.api_key_encrypted) == (saved.base_url, saved.model, saved.api_key_encrypted)
    assert not AuditEvent.objects.filter(action=Action.LLM_TESTED).exists()
    # Without the environment's LLM the page is the admin's again.
    settings.LLM_BASE_URL = ""
    html = staff.get(URL).content.decode()
    assert 'id="llm-locked"' not in html and 'name="_save"' in html


def test_half_a_configuration_is_refused_with_a_message(staff):
    response = staff.post(URL, {"base_url": "http://127.0.0.1:9/v1", "model": "", "_save": "Save"})
    assert response.status_code == 400 and "Give both the base URL and the model" in response.content.decode()
    response = staff.post(URL, {"base_url": "ftp://nope", "model": "m", "_save": "Save"})
    assert response.status_code == 400 and "Enter a valid URL." in response.content.decode()
    assert not LLMSettings.objects.exists()


def press_test(staff, base_url: str, model: str = "small-model", key: str = KEY) -> list[str]:
    response = staff.post(URL, {"base_url": base_url, "model": model, "new_api_key": key, "_test": "Test"})
    assert response.status_code == 200
    assert not LLMSettings.objects.exists()  # testing saves nothing
    return messages_of(response)


def test_the_test_button_sends_one_real_request(staff, server):
    [message] = press_test(staff, server.base_url)
    assert message.startswith("It works: small-model answered in ") and "OK" not in message
    assert server.requests[-1]["model"] == "small-model" and server.requests[-1]["max_tokens"] == 5


def test_the_test_button_uses_the_stored_key_when_none_is_typed(staff, server):
    staff.post(URL, {"base_url": server.base_url, "model": "small-model", "new_api_key": KEY, "_save": "Save"})
    response = staff.post(URL, {"base_url": server.base_url, "model": "small-model", "_test": "Test"})
    assert messages_of(response)[-1].startswith("It works")  # the server accepts KEY only


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable(staff, settings):
    settings.LLM_PRIVATE_HOSTS = ["127.0.0.1"]
    base = f"http://127.0.0.1:{closed_port()}/v1"
    assert press_test(staff, base) == [
        f"Unreachable: nothing answered at {base}. Check the address, and that the server is running and "
        "reachable from this machine."]


def test_bad_key(staff, server):
    assert press_test(staff, server.base_url, key="sk-wrong") == [
        "Bad key: the endpoint refused the API key (HTTP 401)."]


def test_unknown_model_lists_what_the_endpoint_offers(staff, server):
    assert press_test(staff, server.base_url, model="gpt-9") == [
        "Unknown model: the endpoint has no model “gpt-9”. It offers: large-model, small-model."]


def test_timeout(staff, server, settings):
    settings.LLM_TIMEOUT = 1.0
    server.hang = 2.5
    assert press_test(staff, server.base_url) == [f"Timeout: {server.base_url} did not answer within 1 seconds."]


@pytest.fixture
def web_page_server(settings):
    """A web server that answers every path with an HTML page: not an OpenAI API (on 127.0.0.1,
    which the operator allows)."""
    settings.LLM_PRIVATE_HOSTS = ["127.0.0.1"]

    class Page(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _page(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b"<!doctype html><title>Welcome</title><p>Hello"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _page

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_not_openai_compatible(staff, web_page_server):
    [message] = press_test(staff, web_page_server)
    assert message.startswith(f"Not OpenAI-compatible: {web_page_server} answered, but not with an OpenAI chat "
                              "completion.")


def test_a_path_without_the_api_is_not_openai_compatible(staff, server):
    server.models, server.status = None, 404  # no /models, and 404 for chat completions
    assert press_test(staff, server.base_url) == [
        f"Not OpenAI-compatible: POST {server.base_url}/chat/completions answered HTTP 404, so {server.base_url} "
        "does not look like an OpenAI-compatible endpoint. The base URL usually ends in /v1."]


@pytest.mark.parametrize("status", [501, 405])
def test_a_server_without_post_is_not_openai_compatible(staff, server, status):
    server.models, server.status = None, status  # a static web server: no /models, no POST
    assert press_test(staff, server.base_url) == [
        f"Not OpenAI-compatible: POST {server.base_url}/chat/completions answered HTTP {status}, so "
        f"{server.base_url} does not look like an OpenAI-compatible endpoint. The base URL usually ends in /v1."]


def test_a_host_that_does_not_resolve_is_named(staff):
    # .invalid never resolves (RFC 6761): the resolver answers at once, nothing is sent anywhere.
    assert press_test(staff, "http://llm-server.invalid:8080/v1") == [
        "Unknown host: the name “llm-server.invalid” could not be resolved (no DNS answer). "
        "Check the spelling of the base URL."]


def test_the_key_is_never_logged(staff, server, caplog, client, user):
    caplog.set_level(logging.DEBUG)
    server.api_key = "sk-something-else"  # every request with KEY now fails with 401
    press_test(staff, server.base_url)
    staff.post(URL, {"base_url": server.base_url, "model": "small-model", "new_api_key": KEY, "_save": "Save"})
    staff.get(URL)  # lists the models with the stored key (refused)
    with pytest.raises(Exception):  # noqa: B017  (the openai client's 401 error)
        llm.complete([{"role": "user", "content": "hi"}])
    assert caplog.records, "nothing was logged: the capture is not working"
    logged = "\n".join(record.getMessage() + str(record.args) + str(record.exc_text) for record in caplog.records)
    assert "LLM test of small-model" in logged
    assert KEY not in logged


# --- Review round 4: a staff member must not be able to take the stored key, or read other servers ---


@pytest.fixture
def plain_staff(django_user_model):
    user = django_user_model.objects.create_user("stan", password="stan-password-1", is_staff=True)
    client = Client()
    client.force_login(user)
    return client


def test_staff_who_are_not_superusers_may_not_see_test_or_save_the_llm(plain_staff, server):
    assert plain_staff.get(URL).status_code == 403
    assert "llmsettings" not in plain_staff.get("/admin/").content.decode()  # not offered in the admin either
    for button in ("_test", "_save"):
        response = plain_staff.post(URL, {"base_url": server.base_url, "model": "small-model", button: "1"})
        assert response.status_code == 403
    assert not LLMSettings.objects.exists()
    assert server.requests == [] and server.gets == []  # nothing was sent
    assert not AuditEvent.objects.filter(action=Action.LLM_TESTED).exists()


@pytest.fixture
def elsewhere(settings):
    """A second endpoint (another URL) that accepts any key: where someone would like the key sent."""
    from tests.chat.fake_openai import FakeOpenAI

    with FakeOpenAI(reply="OK") as fake:
        fake.models = ["small-model"]
        yield fake


def test_the_stored_key_is_sent_only_to_the_url_it_was_saved_with(staff, server, elsewhere):
    staff.post(URL, {"base_url": server.base_url, "model": "small-model", "new_api_key": KEY, "_save": "Save"})
    # Test another URL with the key field left blank: that URL gets no key (the openai client's placeholder).
    response = staff.post(URL, {"base_url": elsewhere.base_url, "model": "small-model", "_test": "Test"})
    assert messages_of(response)[-1].startswith("It works")
    sent = [r["_headers"].get("authorization") for r in elsewhere.requests] + \
        [g.get("authorization") for g in elsewhere.gets]
    assert sent and all(KEY not in (header or "") for header in sent), sent
    # The saved URL still gets the stored key.
    staff.post(URL, {"base_url": server.base_url, "model": "small-model", "_test": "Test"})
    assert server.requests[-1]["_headers"]["authorization"] == f"Bearer {KEY}"
    [event, *_] = AuditEvent.objects.filter(action=Action.LLM_TESTED)  # newest first
    assert (event.detail["sent"], event.detail["base_url"]) == ("stored key", server.base_url)


def test_saving_a_new_url_needs_the_key_typed_again(staff, server, elsewhere):
    staff.post(URL, {"base_url": server.base_url, "model": "small-model", "new_api_key": KEY, "_save": "Save"})
    response = staff.post(URL, {"base_url": elsewhere.base_url, "model": "small-model", "_save": "Save"})
    assert response.status_code == 400 and "type the API key again" in response.content.decode()
    assert LLMSettings.objects.get().base_url == server.base_url and llm.current().api_key == KEY
    assert all(KEY not in (g.get("authorization") or "") for g in elsewhere.gets)  # nor listed its models with it
    # Ticking "Remove the stored key" saves the new URL without any key.
    staff.post(URL, {"base_url": elsewhere.base_url, "model": "small-model", "clear_api_key": "on", "_save": "Save"})
    assert (LLMSettings.objects.get().base_url, LLMSettings.objects.get().api_key_encrypted) == (elsewhere.base_url, "")


def test_a_test_run_is_audited_without_the_key(staff, server):
    press_test(staff, server.base_url, key="sk-wrong")
    event = AuditEvent.objects.get(action=Action.LLM_TESTED)
    assert event.actor == staff.user
    assert event.detail == {"base_url": server.base_url, "model": "small-model", "outcome": "bad-key",
                            "status": 401, "sent": "typed key"}
    assert "sk-wrong" not in str(event.detail) and event.target_label == f"small-model at {server.base_url}"


def test_the_endpoint_s_own_words_are_never_shown(staff, server):
    server.status, server.error_message = 500, "root:x:0:0:root:/root:/bin/bash internal page"
    response = staff.post(URL, {"base_url": server.base_url, "model": "small-model", "new_api_key": KEY,
                                "_test": "Test"})
    assert messages_of(response) == ["The endpoint answered with an error (HTTP 500)."]
    assert "root:x:0:0" not in response.content.decode()
    server.status, server.error_message = 400, "echo: the request body"
    assert press_test(staff, server.base_url) == ["The endpoint refused the request (HTTP 400)."]


def test_a_private_address_is_refused_unless_the_operator_lists_it(staff, server, settings):
    settings.LLM_PRIVATE_HOSTS = []
    assert press_test(staff, server.base_url) == [
        "Refused: 127.0.0.1 is not a public address. The operator can allow a private LLM host with "
        "LLM_PRIVATE_HOSTS."]
    assert press_test(staff, "http://localhost:9/v1")[0].startswith("Refused: localhost is not a public address.")
    assert press_test(staff, "http://169.254.169.254/latest/v1")[0].startswith(
        "Refused: 169.254.169.254 is not a public address.")
    assert server.requests == [] and server.gets == []
    settings.LLM_PRIVATE_HOSTS = ["10.0.0.0/8", "127.0.0.1"]
    assert press_test(staff, server.base_url)[0].startswith("It works")


def test_a_url_with_credentials_is_refused(staff, server, caplog):
    with_credentials = server.base_url.replace("http://", "http://admin:hunter2@")
    for button in ("_save", "_test"):
        response = staff.post(URL, {"base_url": with_credentials, "model": "small-model", button: "1"})
        assert response.status_code == 400
        assert "must not hold a user name or password" in response.content.decode()
    assert not LLMSettings.objects.exists() and server.requests == []
    assert "hunter2" not in caplog.text
    assert not AuditEvent.objects.filter(action__in=[Action.LLM_TESTED, Action.LLM_CONFIG_CHANGED]).exists()
