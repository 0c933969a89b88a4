"""corpus.llm decides the effective LLM: the environment's when LLM_BASE_URL is set, else the one
staff saved in the admin (key encrypted), else none; answering and contextualisation both use it,
and the chat names the model that answered."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from chat.models import Conversation
from corpus import llm, llm_secret
from corpus.llm_settings import llm_settings_save
from corpus.models import LLMSettings
from tests.chat.chat_corpus import GUIDE, make_collection, make_document
from tests.chat.fake_openai import FakeOpenAI, is_rewrite_request

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("llm_unset")]

ADMIN_KEY = "sk-admin-key-3f9a"


@pytest.fixture
def server(llm_unset, settings):
    settings.LLM_PRIVATE_HOSTS = ["127.0.0.1"]  # the operator allows the local endpoint
    with FakeOpenAI(reply="Thirty seconds [1].") as fake:
        yield fake


def test_nothing_configured_means_extractive(llm_unset):
    assert llm.current() == llm.NONE and not llm.llm_configured()


def test_the_admin_llm_is_used_when_the_environment_sets_none(server):
    llm_settings_save(base_url=server.base_url, model="admin-model", new_api_key=ADMIN_KEY)
    config = llm.current()
    assert (config.source, config.base_url, config.model, config.api_key) == (
        llm.ADMIN, server.base_url, "admin-model", ADMIN_KEY)
    assert ADMIN_KEY not in repr(config)


def test_the_environment_wins_when_set(server, settings):
    llm_settings_save(base_url=server.base_url, model="admin-model", new_api_key=ADMIN_KEY)
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY = "http://127.0.0.1:9/v1", "env-model", "env-key"
    assert (llm.current().source, llm.current().model, llm.current().api_key) == (llm.ENVIRONMENT, "env-model",
                                                                                   "env-key")


def test_the_key_is_stored_encrypted_and_lost_with_the_secret_key(server, settings):
    llm_settings_save(base_url=server.base_url, model="admin-model", new_api_key=ADMIN_KEY)
    stored = LLMSettings.objects.get().api_key_encrypted
    assert stored and ADMIN_KEY not in stored and llm_secret.decrypt(stored) == ADMIN_KEY
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40
    assert llm_secret.decrypt(stored) is None
    llm.forget_stored()
    assert llm.current().api_key == "" and llm.current().model == "admin-model"


def test_saving_without_a_new_key_keeps_the_stored_one_and_clearing_removes_it(server):
    llm_settings_save(base_url=server.base_url, model="admin-model", new_api_key=ADMIN_KEY)
    llm_settings_save(base_url=server.base_url, model="other-model")
    assert llm.current().api_key == ADMIN_KEY and llm.current().model == "other-model"
    llm_settings_save(base_url=server.base_url, model="other-model", clear_api_key=True)
    assert LLMSettings.objects.get().api_key_encrypted == "" and llm.current().api_key == ""


def test_other_processes_follow_a_change_within_the_cache_time(server, settings, monkeypatch):
    monkeypatch.setattr(llm, "CACHE_SECONDS", 0.5)
    llm_settings_save(base_url=server.base_url, model="first")
    assert llm.current().model == "first"
    # Another process saves: the row changes without this process's cache being dropped.
    LLMSettings.objects.update(model="second")
    assert llm.current().model == "first"
    time.sleep(0.6)
    assert llm.current().model == "second"


def test_contextualisation_and_rewriting_calls_go_to_the_admin_llm_with_its_key(server):
    llm_settings_save(base_url=server.base_url, model="admin-model", new_api_key=ADMIN_KEY)
    assert llm.complete([{"role": "user", "content": "Summarise"}]) == "Thirty seconds [1]."
    request = server.requests[-1]
    assert request["model"] == "admin-model"
    assert request["_headers"]["authorization"] == f"Bearer {ADMIN_KEY}"


def test_the_chat_names_the_model_that_answered(client, user, server):
    server.reply = lambda r: "request timeout" if is_rewrite_request(r) else "The timeout is thirty seconds [1]."
    collection = make_collection("guides", owner=user)
    make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)
    llm_settings_save(base_url=server.base_url, model="admin-model", new_api_key=ADMIN_KEY)
    client.force_login(user)
    client.post(reverse("chat:ask"), {"question": "What is the default request timeout?", "collection": "guides"})
    reply = Conversation.objects.get().messages.get(role="assistant")
    assert (reply.mode, reply.model) == ("llm", "admin-model")
    assert server.requests[-1]["model"] == "admin-model"
    html = client.get(f"/c/{reply.conversation_id}/").content.decode()
    assert "Answered by admin-model" in html and "Quoted from the sources (no LLM)" not in html


# --- Review round 4: the LLM goes through the guarded outbound client ---


def test_an_admin_llm_on_a_private_address_is_refused_unless_the_operator_lists_it(server, settings, monkeypatch):
    from outbound import addresses

    checks = []
    original = addresses.checked_addresses
    monkeypatch.setattr(addresses, "checked_addresses", lambda *a, **kw: checks.append(a) or original(*a, **kw))
    settings.LLM_MAX_RETRIES = 2  # a refusal is not retried: it would be refused again
    llm_settings_save(base_url=server.base_url, model="admin-model", new_api_key=ADMIN_KEY)
    settings.LLM_PRIVATE_HOSTS = []
    with pytest.raises(llm.llm_errors()) as caught:
        llm.complete([{"role": "user", "content": "Summarise"}])
    assert str(caught.value) == "refused: 127.0.0.1 is not a public address"
    assert server.requests == [] and len(checks) == 1
    settings.LLM_PRIVATE_HOSTS = ["127.0.0.1"]
    assert llm.complete([{"role": "user", "content": "Summarise"}]) == "Thirty seconds [1]."


def test_the_environment_s_own_llm_host_is_allowed(server, settings):
    settings.LLM_PRIVATE_HOSTS = []
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY = server.base_url, "env-model", "env-key"
    assert llm.complete([{"role": "user", "content": "Summarise"}]) == "Thirty seconds [1]."


def test_a_chat_answer_reports_a_refused_llm_address_as_a_failed_llm(client, user, server, settings):
    collection = make_collection("guides", owner=user)
    make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)
    llm_settings_save(base_url=server.base_url, model="admin-model", new_api_key=ADMIN_KEY)
    settings.LLM_PRIVATE_HOSTS = []
    client.force_login(user)
    response = client.post(reverse("chat:ask"), {"question": "What is the default request timeout?",
                                                 "collection": "guides"})
    assert response.status_code == 302 and server.requests == []
    reply = Conversation.objects.get().messages.get(role="assistant")
    # As when the LLM is down: one sentence for the user, nothing about the address.
    assert (reply.status, reply.error) == ("failed", "The language model failed while answering.")


def test_a_new_base_url_saved_without_a_key_drops_the_stored_key(server):
    llm_settings_save(base_url=server.base_url, model="admin-model", new_api_key=ADMIN_KEY)
    llm_settings_save(base_url="https://llm.example/v1", model="admin-model")
    assert LLMSettings.objects.get().api_key_encrypted == "" and llm.current().api_key == ""
    llm_settings_save(base_url=server.base_url, model="admin-model", new_api_key=ADMIN_KEY)
    llm_settings_save(base_url="https://llm.example/v1", model="admin-model", new_api_key="sk-other")
    assert llm.current().api_key == "sk-other"


def test_a_base_url_with_credentials_is_never_saved(server):
    with pytest.raises(ValueError, match="must not hold a user name or password"):
        llm_settings_save(base_url="https://user:pass@llm.example/v1", model="m")
    assert not LLMSettings.objects.exists()
