"""/v1: the official `openai` client against the running test server (models, completions
streamed and not, citations, access control and errors in OpenAI's shape)."""

from __future__ import annotations

from datetime import timedelta

import openai
import pytest
from django.utils import timezone

from accounts.models import ApiToken
from accounts.services import token_create
from tests.chat.chat_corpus import COOKING, GUIDE, make_collection, make_document
from tests.chat.fake_openai import is_rewrite_request

QUESTION = "What is the default request timeout?"


@pytest.fixture
def corpus(transactional_db, user, other_user):
    guides = make_collection("guides", owner=user)
    document = make_document(guides, source="deploy.md", title="Deployment guide", parts=GUIDE)
    make_document(make_collection("kitchen", owner=other_user), source="bread.md", parts=COOKING)
    return document


def client_for(live_server, user) -> openai.OpenAI:
    key = token_create(user=user)[1]
    return openai.OpenAI(base_url=f"{live_server.url}/v1", api_key=key, max_retries=0, timeout=60)


def ask(client, model="ragweb/guides", question=QUESTION, **extra):
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": question}], **extra)


def test_models_are_the_collections_the_caller_may_read(live_server, corpus, user, other_user):
    assert [m.id for m in client_for(live_server, user).models.list()] == ["ragweb", "ragweb/guides"]
    assert [m.id for m in client_for(live_server, other_user).models.list()] == ["ragweb", "ragweb/kitchen"]
    model = client_for(live_server, user).models.retrieve("ragweb/guides")
    assert (model.id, model.owned_by) == ("ragweb/guides", "alice")


def test_completion_answers_with_citations_without_an_llm(live_server, corpus, user, no_llm):
    completion = ask(client_for(live_server, user))

    answer = completion.choices[0].message.content
    assert completion.object == "chat.completion" and completion.model == "ragweb/guides"
    assert completion.choices[0].finish_reason == "stop"
    assert "thirty seconds" in answer and "[1]" in answer
    assert completion.ragweb_mode == "extractive" and "Extractive" not in answer  # the notice is not content
    citations = completion.citations  # the extra field, kept by the client's models
    assert citations[0]["n"] == 1 and citations[0]["document"] == {"id": corpus.pk, "title": "Deployment guide",
                                                                      "source": "deploy.md"}
    first = citations[0]
    assert first["text"] == "".join(GUIDE[first["start"]:first["end"]])
    assert all(c["document"]["source"] == "deploy.md" for c in citations)


def test_a_streamed_completion_ends_with_the_mode_and_confidence_of_the_completion(live_server, corpus, user, no_llm):
    # A streaming client learns that the answer is extractive (the notice is never content) as one that does not.
    client = client_for(live_server, user)
    completion = ask(client)
    *earlier, last = list(ask(client, stream=True))
    assert completion.ragweb_mode == "extractive" and completion.ragweb_confidence is not None
    assert earlier and not any("ragweb_confidence" in chunk.model_extra for chunk in earlier)  # the last one's only
    assert (last.ragweb_mode, last.ragweb_confidence) == (completion.ragweb_mode, completion.ragweb_confidence)
    assert last.citations == completion.citations


def test_streamed_completion_is_grounded_line_by_line_and_ends_with_citations(live_server, corpus, user, fake_llm):
    fake_llm.reply = lambda request: ("The timeout is thirty seconds [1].\n"
                                      "Failed requests are retried twice with exponential backoff [7].")
    chunks = list(ask(client_for(live_server, user), stream=True))

    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    text = "".join(pieces)
    # [7] names no source: the grounding pass removed it (or put the source that says so) before it went out.
    assert "[7]" not in text and text.startswith("The timeout is thirty seconds [1].\nFailed requests are retried")
    assert pieces[0] == "The timeout is thirty seconds "  # the first line, checked, goes out before the second
    assert text == ask(client_for(live_server, user)).choices[0].message.content  # as the completion says it
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert [c["n"] for c in chunks[-1].citations][:1] == [1]
    assert all(getattr(c, "citations", None) is None for c in chunks[:-1])


def test_earlier_turns_are_the_history(live_server, corpus, user, fake_llm):
    fake_llm.reply = lambda r: "request retries" if is_rewrite_request(r) else "Twice [1]."
    completion = client_for(live_server, user).chat.completions.create(model="ragweb", messages=[
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Tell me about failed requests."},
        {"role": "assistant", "content": "They are retried."},
        {"role": "user", "content": [{"type": "text", "text": "How often?"}]},
    ])

    assert completion.choices[0].message.content == "Twice [1]."
    rewrite = next(r for r in fake_llm.requests if is_rewrite_request(r))
    prompt = " ".join(str(m["content"]) for m in rewrite["messages"])
    assert "Tell me about failed requests." in prompt and "They are retried." in prompt
    assert "You are helpful." not in prompt


def test_a_user_without_access_sees_neither_the_model_nor_an_answer(live_server, corpus, other_user, no_llm):
    client = client_for(live_server, other_user)
    assert "ragweb/guides" not in {m.id for m in client.models.list()}

    for call in (lambda: ask(client), lambda: list(ask(client, stream=True)),
                 lambda: client.models.retrieve("ragweb/guides"), lambda: ask(client, model="ragweb/nope")):
        with pytest.raises(openai.NotFoundError) as caught:
            call()
        assert caught.value.code == "model_not_found"
        assert "does not exist or you do not have access to it" in caught.value.message

    answer = ask(client, model="ragweb", question="How long do I knead the dough?")
    assert {c["document"]["source"] for c in answer.citations} == {"bread.md"}


def test_a_bad_key_is_refused(live_server, corpus):
    client = openai.OpenAI(base_url=f"{live_server.url}/v1", api_key="not-a-token", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as caught:
        client.models.list()
    assert caught.value.code == "invalid_api_key"


def test_a_read_only_key_answers_and_an_expired_one_is_refused_saying_so(live_server, corpus, user, no_llm):
    token, key = token_create(user=user, read_only=True)
    client = openai.OpenAI(base_url=f"{live_server.url}/v1", api_key=key, max_retries=0, timeout=60)
    assert [m.id for m in client.models.list()] == ["ragweb", "ragweb/guides"]
    assert {c["document"]["source"] for c in ask(client).citations} == {"deploy.md"}
    ApiToken.objects.filter(pk=token.pk).update(expires=timezone.now() - timedelta(minutes=1))
    with pytest.raises(openai.AuthenticationError) as caught:
        ask(client)
    assert "This token expired at" in caught.value.message


def test_bad_requests_get_openai_errors(live_server, corpus, user, no_llm):
    client = client_for(live_server, user)
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="ragweb", messages=[])
    assert caught.value.param == "messages" and caught.value.body["type"] == "invalid_request_error"
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="ragweb", messages=[{"role": "assistant", "content": "Hi"}])
    assert "The last message must be the user's question." in caught.value.message
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="ragweb", messages=[{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}])
    assert "Only text content is supported." in caught.value.message


def test_nothing_found_is_said_as_the_answer(live_server, corpus, user, no_llm):
    make_collection("empty", owner=user)
    for streamed in (False, True):
        completion = ask(client_for(live_server, user), model="ragweb/empty", stream=streamed)
        if streamed:
            chunks = list(completion)
            text, citations = "".join(c.choices[0].delta.content or "" for c in chunks), chunks[-1].citations
        else:
            text, citations = completion.choices[0].message.content, completion.citations
        assert text.startswith("No passage in the collection “Empty” matches this question.")
        assert citations == []


def test_llm_failure_is_a_502(live_server, corpus, user, fake_llm):
    fake_llm.status = 500
    with pytest.raises(openai.InternalServerError) as caught:
        ask(client_for(live_server, user))
    assert caught.value.status_code == 502 and caught.value.code == "upstream_error"
    with pytest.raises(openai.APIError) as caught:
        list(ask(client_for(live_server, user), stream=True))
    assert "language model" in caught.value.message


def test_an_old_model_name_answers_from_the_renamed_collection_only(live_server, corpus, user, other_user, no_llm):
    """`ragweb/guides` after "guides" became "handbook": the same collection, and nobody can take
    "guides" to answer in its place."""
    from django.core.exceptions import ValidationError

    from corpus import services

    services.collection_update(collection=corpus.collection, slug="handbook")
    with pytest.raises(ValidationError):
        services.collection_create(owner=other_user, name="Phish", slug="guides")
    completion = ask(client_for(live_server, user), model="ragweb/guides")
    assert {c["document"]["source"] for c in completion.citations} == {"deploy.md"}
    with pytest.raises(openai.NotFoundError):
        ask(client_for(live_server, other_user), model="ragweb/guides")
