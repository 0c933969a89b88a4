"""The answer pipeline end to end: real retrieval on Postgres, the real openai client talking to
a real HTTP server (tests/chat/fake_openai.py), the stored messages."""

import re

import pytest

from chat.answering import pipeline as answer_pipeline
from chat.answering.grounding import UNSUPPORTED_NOTE
from chat.answering.pipeline import UNSUPPORTED_ANSWER
from chat.models import Message
from chat.services import conversation_start, message_ask, message_request_stop
from corpus.models import Chunk
from tests.chat.chat_corpus import COOKING, GUIDE, make_collection, make_document
from tests.chat.fake_openai import is_rewrite_request, last_user_content

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(user):
    collection = make_collection("guides", owner=user)
    guide = make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)
    cooking = make_document(collection, source="bread.txt", title="Bread", parts=COOKING, media_type="text/plain")
    return {"collection": collection, "guide": guide, "cooking": cooking}


def run(conversation, question, **kwargs):
    events = list(message_ask(conversation=conversation, question=question, **kwargs))
    assert events[0].kind == "start" and events[-1].kind == "done"
    return events


def test_extractive_answer_without_llm_quotes_the_best_sentence(user, corpus, no_llm):
    conversation = conversation_start(user=user)
    events = run(conversation, "What is the default request timeout?", stream=False)
    reply = events[-1].message
    reply.refresh_from_db()
    assert reply.status == "complete" and reply.mode == "extractive"
    assert reply.content.startswith("- ")  # quotes only: the mode says it is extractive
    cited = {c["n"]: c for c in reply.citations}
    line = next(line for line in reply.content.splitlines() if "thirty seconds" in line)
    n = int(line.rsplit("[", 1)[1].rstrip("]"))
    assert cited[n]["document"]["source"] == "deploy.md"
    assert cited[n]["start"] <= 2 < cited[n]["end"]


def test_citations_map_to_segments_of_chunks(user, corpus, no_llm):
    conversation = conversation_start(user=user)
    reply = run(conversation, "How is the request timeout configured?", stream=False)[-1].message
    assert [c["n"] for c in reply.citations] == list(range(1, len(reply.citations) + 1))
    for citation in reply.citations:
        chunks = Chunk.objects.filter(document_id=citation["document"]["id"], chunk_index__gte=citation["start"],
                                      chunk_index__lt=citation["end"]).order_by("chunk_index")
        assert citation["end"] - citation["start"] == chunks.count() > 0
        assert citation["text"] == "".join(c.text for c in chunks)
        assert citation["char_start"] == chunks.first().start and citation["char_end"] == chunks.last().end
    assert str(corpus["guide"].pk) in reply.relevance
    assert all(0.0 <= v <= 1.0 for v in reply.relevance[str(corpus["guide"].pk)].values())


def test_llm_answer_streams_through_the_openai_client(user, corpus, fake_llm):
    fake_llm.reply = lambda request: "The default timeout is thirty seconds [1]."
    conversation = conversation_start(user=user)
    events = run(conversation, "What is the default request timeout?", stream=True)
    tokens = [e.text for e in events if e.kind == "token"]
    assert len(tokens) == 7 and "".join(tokens) == "The default timeout is thirty seconds [1]."
    reply = Message.objects.get(pk=events[-1].message.pk)
    assert (reply.status, reply.mode, reply.content) == ("complete", "llm", "".join(tokens))
    [request] = fake_llm.requests  # no history, so no rewrite request
    assert request["stream"] is True and request["model"] == "fake-model"
    assert request["_headers"]["authorization"] == "Bearer test-key"
    prompt = last_user_content(request)
    first = reply.citations[0]
    assert f"[1] {first['document']['title']} — {first['document']['source']}\n{first['text'].strip()}" in prompt
    assert prompt.endswith("Question: What is the default request timeout?")
    assert "thirty seconds by default" in prompt


def test_llm_answer_without_streaming(user, corpus, fake_llm):
    fake_llm.reply = lambda request: "Thirty seconds [1]."
    reply = run(conversation_start(user=user), "What is the default request timeout?", stream=False)[-1].message
    assert reply.content == "Thirty seconds [1]." and reply.status == "complete"
    assert fake_llm.requests[0].get("stream") in (None, False)


def test_follow_up_is_rewritten_into_a_standalone_query(user, corpus, fake_llm):
    standalone = "How many times are failed requests retried?"
    fake_llm.reply = lambda request: standalone if is_rewrite_request(request) else "Twice [1]."
    conversation = conversation_start(user=user)
    run(conversation, "What does the deployment guide say about requests?", stream=False)
    fake_llm.requests.clear()

    reply = run(conversation, "And how often are they retried?", stream=False)[-1].message

    rewrite, answer = fake_llm.requests
    assert is_rewrite_request(rewrite)
    assert "What does the deployment guide say about requests?" in last_user_content(rewrite)
    assert last_user_content(rewrite).endswith("Latest question: And how often are they retried?")
    assert last_user_content(answer).endswith(f"Question: {standalone}")
    assert reply.query == standalone
    # Retrieval used the standalone query: the retries chunk (index 3) is among the sources.
    assert any(c["document"]["source"] == "deploy.md" and c["start"] <= 3 < c["end"] for c in reply.citations)


def test_llm_failure_mid_answer_keeps_the_partial_text(user, corpus, fake_llm):
    fake_llm.reply = lambda request: "One two three four five six."
    fake_llm.drop_after = 3
    events = run(conversation_start(user=user), "What is the request timeout?", stream=True)
    reply = Message.objects.get(pk=events[-1].message.pk)
    assert reply.status == "failed"
    assert reply.content == "One two three"
    assert reply.error.startswith("The language model")
    assert events[-1].upstream_failure is True


def test_slow_llm_times_out_with_a_message(user, corpus, fake_llm, settings):
    settings.LLM_TIMEOUT = 1.0
    fake_llm.hang = 2.5
    reply = run(conversation_start(user=user), "What is the request timeout?", stream=True)[-1].message
    assert reply.status == "failed" and reply.content == ""
    assert reply.error == "The language model did not answer in time (timeout 1 s)."


def test_unreachable_llm_is_reported(user, corpus, settings):
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_MAX_RETRIES = "http://127.0.0.1:9/v1", "m", 0
    reply = run(conversation_start(user=user), "What is the request timeout?", stream=False)[-1].message
    assert reply.status == "failed"
    assert reply.error.startswith("The language model could not be reached")


def test_no_readable_collection_is_a_message(user, no_llm):
    reply = run(conversation_start(user=user), "Anything?")[-1].message
    assert reply.status == "failed"
    assert reply.error == "There is no collection you may read yet, so there is nothing to search."
    assert list(reply.conversation.messages.values_list("role", flat=True)) == ["user", "assistant"]


def test_empty_collection_finds_nothing(user, no_llm):
    make_collection("empty", owner=user)
    reply = run(conversation_start(user=user), "Anything at all?")[-1].message
    assert reply.status == "not_found" and reply.error.startswith("No passage in the collection “Empty”")


def test_stop_request_keeps_the_partial_answer(user, corpus, fake_llm):
    fake_llm.reply = lambda request: " ".join(f"word{i}" for i in range(40))
    fake_llm.token_delay = 0.05
    events = message_ask(conversation=conversation_start(user=user), question="What is the timeout?", stream=True)
    start = next(events)
    next(events)  # the first token
    assert message_request_stop(message=start.message) is True
    rest = list(events)
    reply = Message.objects.get(pk=start.message.pk)
    assert reply.status == "stopped"
    assert reply.content.startswith("word0") and 1 <= len(reply.content.split()) < 40
    assert rest[-1].kind == "done"
    assert message_request_stop(message=reply) is False  # already finished


def test_closing_the_stream_keeps_the_partial_answer(user, corpus, fake_llm):
    fake_llm.reply = lambda request: "alpha beta gamma delta epsilon"
    events = message_ask(conversation=conversation_start(user=user), question="What is the timeout?", stream=True)
    start = next(events)
    assert next(events).text == "alpha" and next(events).text == " beta"
    events.close()  # what the server does when the browser goes away
    reply = Message.objects.get(pk=start.message.pk)
    assert (reply.status, reply.content) == ("stopped", "alpha beta")


def test_failed_rewrite_falls_back_to_the_conversation(user, corpus, fake_llm):
    conversation = conversation_start(user=user)
    run(conversation, "What does the guide say about requests?", stream=False)
    fake_llm.status = 500  # every request fails from now on: the rewrite, then the answer
    reply = run(conversation, "And the timeout?", stream=False)[-1].message
    assert reply.query == "And the timeout? (guide requests)"  # as without an LLM
    assert reply.status == "failed" and reply.error == "The language model answered with an error (HTTP 500)."


def _source_number(request, title):
    """The [n] the prompt gave the source titled `title`."""
    return int(re.search(rf"^\[(\d+)\] {title}", last_user_content(request), re.MULTILINE).group(1))


def test_grounding_cites_an_llm_answer_that_cites_nothing(user, corpus, fake_llm):
    fake_llm.reply = lambda request: "The request timeout is thirty seconds by default."
    events = run(conversation_start(user=user), "What is the default request timeout?", stream=True)
    reply = Message.objects.get(pk=events[-1].message.pk)
    assert "".join(e.text for e in events if e.kind == "token") == "The request timeout is thirty seconds by default."
    [cited] = reply.citations  # the sources listed under the answer are the ones it cites
    assert reply.content == f"The request timeout is thirty seconds by default [{cited['n']}]."
    assert cited["document"]["source"] == "deploy.md" and cited["start"] <= 2 < cited["end"]


def test_grounding_removes_a_citation_of_a_source_that_does_not_exist(user, corpus, fake_llm):
    fake_llm.reply = lambda request: "Bread is baked for thirty five minutes [9]. The moon is made of cheese [9]."
    reply = run(conversation_start(user=user), "How long is bread baked?", stream=False)[-1].message
    sources = fake_llm.requests[-1]["messages"][-1]["content"].count("\n\n[")
    assert len(reply.citations) < 9 and sources < 9
    [cited] = reply.citations
    assert cited["document"]["source"] == "bread.txt"
    assert reply.content == (f"Bread is baked for thirty five minutes [{cited['n']}]. The moon is made of cheese."
                             f"\n\n{UNSUPPORTED_NOTE}")


def test_an_answer_no_source_supports_is_replaced_by_what_the_sources_say(user, corpus, fake_llm):
    fake_llm.reply = lambda request: ("Loaves are usually glazed with honey before serving. "
                                      "Many bakers prefer sourdough starters over commercial yeast.")
    reply = run(conversation_start(user=user), "How long is bread baked?", stream=False)[-1].message
    assert reply.content.startswith(f"*{UNSUPPORTED_ANSWER}*")
    assert "honey" not in reply.content  # the unsupported paragraph is not shown as the answer
    quote = next(line for line in reply.content.splitlines() if "thirty five minutes" in line)
    n = int(quote.rsplit("[", 1)[1].rstrip("]"))
    assert [c["n"] for c in reply.citations] == [n] and reply.citations[0]["document"]["source"] == "bread.txt"


def test_grounding_moves_a_citation_to_the_source_that_supports_it(user, corpus, fake_llm):
    def wrong_source(request):
        return f"Failed requests are retried twice with exponential backoff [{_source_number(request, 'Bread')}]."

    fake_llm.reply = wrong_source
    reply = run(conversation_start(user=user), "How are failed requests retried?", stream=False)[-1].message
    [cited] = reply.citations
    assert cited["document"]["source"] == "deploy.md"
    assert reply.content == f"Failed requests are retried twice with exponential backoff [{cited['n']}]."


def test_an_off_topic_question_is_not_found(user, corpus, no_llm):
    reply = run(conversation_start(user=user), "Who won the football world cup in 1998?", stream=False)[-1].message
    assert (reply.status, reply.content, reply.citations) == ("not_found", "", [])
    assert reply.error == "Nothing in the collection “Guides” answers this question."


def test_a_question_in_other_word_forms_than_its_source_is_answered(user, no_llm):
    # The handbook says "employee", the question "employees": the same word for the coverage check.
    make_document(make_collection("handbook", owner=user), source="handbook.md", title="Staff Handbook", parts=[
        "# Staff Handbook\n\n## Working hours\n\nThe office is open from 8:30 to 17:00 Monday to Friday. "
        "Staff may work from home on Wednesdays.\n\n",
        "## Holidays\n\nEvery employee has 28 days of paid holiday per year, including public holidays. "
        "Holiday requests go to the team lead at least two weeks in advance.\n"])
    reply = run(conversation_start(user=user), "How many days of holiday do employees get?", stream=False)[-1].message
    assert reply.status == "complete"
    assert reply.content.startswith("- Every employee has 28 days of paid holiday per year")


def test_a_follow_up_that_finds_nothing_alone_is_searched_in_context(user, corpus, no_llm, settings, monkeypatch):
    # retrieval in context only: "duration", "chosen" are not the guide's words
    monkeypatch.setattr(answer_pipeline, "ANSWER_MIN_COVERAGE", 0)
    conversation = conversation_start(user=user)
    run(conversation, "How is the request timeout configured?", stream=False)
    reply = run(conversation, "Could a different duration be chosen?", stream=False)[-1].message
    assert reply.status == "complete"
    assert reply.query == "Could a different duration be chosen? (request timeout configured)"
    assert any(c["document"]["source"] == "deploy.md" and c["start"] <= 2 < c["end"] for c in reply.citations)
    alone = run(conversation_start(user=user), "Could a different duration be chosen?", stream=False)[-1].message
    assert alone.status == "not_found"


def test_sources_that_hardly_hold_the_question_s_words_do_not_answer_it(user, corpus, no_llm, settings, monkeypatch):
    # the guide is near the subject; only what the question names is missing
    monkeypatch.setattr(answer_pipeline, "ANSWER_MIN_RELEVANCE", 0)
    question = "Which port number does the deployed service listen on?"
    reply = run(conversation_start(user=user), question, stream=False)[-1].message
    assert reply.status == "not_found" and reply.citations == []
    monkeypatch.setattr(answer_pipeline, "ANSWER_MIN_COVERAGE", 0)
    assert run(conversation_start(user=user), question, stream=False)[-1].message.status == "complete"


def test_a_new_subject_is_searched_as_asked(user, corpus, no_llm):
    conversation = conversation_start(user=user)
    run(conversation, "How is the request timeout configured?", stream=False)
    follow_up = run(conversation, "And how often are failed requests retried?", stream=False)[-1].message
    assert follow_up.query.startswith("And how often are failed requests retried? (")  # it points back
    reply = run(conversation, "How long should the dough be kneaded?", stream=False)[-1].message
    assert reply.query == "How long should the dough be kneaded?"  # no timeout or retry words carried over
    assert [c["document"]["source"] for c in reply.citations][:1] == ["bread.txt"]




ZEBRAS = [
    "# Purple zebras of the Tarn valley\n\nMs. Halvorsen guides the purple zebras across the Tarn river each spring. "
    "She has led the crossing since 1998, when Dr. J. R. Smith retired from the post.\n\n",
    "The herd waits on the northern bank until the water drops below 1.5 metres. The crossing takes about three "
    "hours, and the zebras follow her lantern in a single line.\n\n",
]
OTTERS = [
    "# River otters of the Tarn\n\nOtters live along the Tarn river all year round. They cross the river many "
    "times a day, hunting fish in the shallow water.\n\n",
    "Each spring the otters raise their young in dens dug into the river bank. The river guides who work in the "
    "valley count the otters every autumn.\n\n",
]


@pytest.fixture
def tarn(user):
    collection = make_collection("tarn", owner=user)
    make_document(collection, source="https://zebras.example/index.html", title="Purple zebras", parts=ZEBRAS)
    make_document(collection, source="otters.md", title="River otters", parts=OTTERS)
    return collection


def test_the_top_ranked_source_that_holds_the_answer_is_quoted_whole_and_numbered_from_one(user, tarn, no_llm):
    reply = run(conversation_start(user=user), "Who guides the purple zebras across the Tarn river?",
                stream=False)[-1].message
    lines = reply.content.splitlines()
    # Not cut at "Ms." or at the initials, and cited as source 1.
    assert lines[0] == "- Ms. Halvorsen guides the purple zebras across the Tarn river each spring. [1]"
    assert reply.citations[0]["n"] == 1 and reply.citations[0]["document"]["source"].endswith("index.html")
    # The sources listed are those cited, numbered 1..m as the text cites them.
    cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]", reply.content)})
    assert cited == [c["n"] for c in reply.citations] == list(range(1, len(cited) + 1))


def test_an_off_topic_question_inside_a_conversation_is_searched_on_its_own(user, tarn, no_llm):
    from chat.answering.pipeline import _search_in_conversation
    from corpus.models import Collection

    conversation = conversation_start(user=user)
    assert run(conversation, "Who guides the purple zebras across the Tarn river?", stream=False)[-1].message.status \
        == "complete"
    # With the zebra question's words the zebra page looks confident, but it holds nothing of bread.
    reply = run(conversation, "How do I bake sourdough bread?", stream=False)[-1].message
    assert (reply.status, reply.content, reply.citations) == ("not_found", "", [])
    history = [("user", "Who guides the purple zebras across the Tarn river?"), ("assistant", "...")]
    query, _result = _search_in_conversation("How do I bake sourdough bread?", history,
                                             Collection.objects.filter(pk=tarn.pk), "balanced")
    assert query == "How do I bake sourdough bread?"


def test_a_real_follow_up_still_uses_the_conversation(user, corpus, no_llm):
    conversation = conversation_start(user=user)
    run(conversation, "How is the request timeout configured?", stream=False)
    reply = run(conversation, "How do I change it?", stream=False)[-1].message
    assert reply.status == "complete"
    assert reply.query == "How do I change it? (request timeout configured)"
    assert "REQUEST_TIMEOUT" in reply.content


def test_a_row_of_an_html_table_answers_a_row_question(user, no_llm):
    # The table as ingestion reads it (corpus.ingest.parse.htmltext): its July row is the answer, under
    # its header, not the whole table as one sentence.
    from corpus.ingest.parse import parse_document

    html = (b"<html><head><title>Beekeeping</title></head><body><h1>Beekeeping</h1>"
            b"<p>A super is a box placed above the brood chamber.</p><h2>Hive inspections</h2><table>"
            b"<tr><th>Month</th><th>Inspection interval</th></tr><tr><td>April</td><td>every 10 days</td></tr>"
            b"<tr><td>July</td><td>every 7 days</td></tr><tr><td>October</td><td>once a month</td></tr>"
            b"</table></body></html>")
    parsed = parse_document(html, filename="bees.html")
    make_document(make_collection("bees", owner=user), source="bees.html", title="Beekeeping",
                  parts=[parsed.text], media_type="text/html")
    reply = run(conversation_start(user=user), "What is the inspection interval in July?", stream=False)[-1].message
    assert reply.status == "complete"
    assert reply.content.startswith("- Month: July; Inspection interval: every 7 days [1]")
    assert "April" not in reply.content
