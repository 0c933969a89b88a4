import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from chat import questions
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(user):
    make_document(make_collection("guides", owner=user), source="deploy.md", title="Deployment guide", parts=GUIDE)


def test_ask_command_prints_json(user, corpus, no_llm):
    out = StringIO()
    call_command("ask", "What is the default request timeout?", "--user", "alice", "--json", stdout=out)
    body = json.loads(out.getvalue())
    assert body["mode"] == "extractive" and "thirty seconds" in body["answer"]
    assert body["citations"][0]["document"]["source"] == "deploy.md"


def test_ask_command_streams_and_lists_sources(user, corpus, fake_llm):
    fake_llm.reply = lambda r: "Thirty seconds [1]."
    out = StringIO()
    call_command("ask", "What is the timeout?", "--user", "alice", "--collection", "guides", stdout=out)
    text = out.getvalue()
    assert text.startswith("Thirty seconds [1].\n\nSources:\n  [1] Deployment guide — deploy.md, chunk")


def test_ask_command_rejects_unreadable_collection(user, other_user, corpus):
    make_collection("secret", owner=other_user)
    with pytest.raises(CommandError, match="No collection 'secret' that you may read."):
        call_command("ask", "x", "--user", "alice", "--collection", "secret")


def test_ask_command_says_plainly_when_nothing_answers(user, corpus, no_llm):
    out = StringIO()
    call_command("ask", "Who painted the Mona Lisa?", "--user", "alice", stdout=out)  # no CommandError
    assert out.getvalue().strip() == "Not found: Nothing in the collection “Guides” answers this question."
    out = StringIO()
    call_command("ask", "Who painted the Mona Lisa?", "--user", "alice", "--json", stdout=out)
    body = json.loads(out.getvalue())
    assert (body["answer"], body["citations"], body["error"]) == (
        "", [], "Nothing in the collection “Guides” answers this question.")


def test_ask_command_has_the_question_cap_of_the_other_ways(user, corpus, settings, monkeypatch):
    monkeypatch.setattr(questions, "MAX_QUESTION_CHARS", 10)

    with pytest.raises(CommandError, match="The question is longer than 10 characters."):
        call_command("ask", "What is the default request timeout?", "--user", "alice", stdout=StringIO())
