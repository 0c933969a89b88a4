"""manage.py evaluate_answers: the real answer pipeline over a small corpus, with and without an LLM."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from chat.evaluation.answers import without_markers
from tests.chat.chat_corpus import COOKING, GUIDE, make_collection, make_document
from tests.chat.fake_openai import is_rewrite_request

pytestmark = pytest.mark.django_db

ITEMS = [
    {"id": "q1", "question": "What is the default request timeout?", "kind": "factoid", "source": "deploy.md",
     "evidence": ["The request timeout is thirty seconds by default"]},
    {"id": "q2", "question": "How long do I bake the bread loaf?", "kind": "factoid", "source": "bread.txt",
     "evidence": ["for thirty five minutes"]},
    {"id": "q3", "question": "How are failed requests retried?", "kind": "section", "source": "deploy.md",
     "evidence": ["Failed requests are retried twice with exponential backoff"]},
]
OFFTOPIC = [{"id": "o1", "question": "Who painted the Mona Lisa?", "category": "general"},
            {"id": "o2", "question": "zxqv blorp wug", "category": "gibberish"}]
CONVERSATIONS = [{"id": "c1", "kind": "follow-up", "turns": ["What does the guide say about retries?",
                                                             "How many times does it retry?"],
                  "source": "deploy.md", "evidence": ["retried twice"]},
                 {"id": "c2", "turns": [
                     {"question": "What is the default request timeout?", "kind": "first", "source": "deploy.md",
                      "evidence": ["thirty seconds by default"]},
                     {"question": "How do I change it?", "kind": "follow-up", "source": "deploy.md",
                      "evidence": ["Set REQUEST_TIMEOUT in the settings file"],
                      "standalone": "How do I change the request timeout?"},
                     {"question": "How long do I bake the bread loaf?", "kind": "new-topic", "source": "bread.txt",
                      "evidence": ["for thirty five minutes"], "page": 2}]}]
UNANSWERABLE = [{"id": "u1", "question": "Which port does the deployed service listen on?", "kind": "unanswerable",
                 "near": "deploy.md", "absent": ["port"]}]


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def files(tmp_path):
    collection = make_collection("guides")
    make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)
    # Two pages: the baking sentence is on the second.
    make_document(collection, source="bread.txt", title="Bread", parts=COOKING, media_type="application/pdf",
                  pages=[0, len(COOKING[0]) + len(COOKING[1])])
    return {"eval": _write(tmp_path / "eval.jsonl", ITEMS), "off": _write(tmp_path / "off.jsonl", OFFTOPIC),
            "conv": _write(tmp_path / "conv.jsonl", CONVERSATIONS),
            "near": _write(tmp_path / "near.jsonl", UNANSWERABLE), "report": tmp_path / "report"}


def _evaluate(files, *extra):
    out = StringIO()
    call_command("evaluate_answers", str(files["eval"]), "--collection", "guides", "--offtopic", str(files["off"]),
                 "--unanswerable", str(files["near"]), "--conversations", str(files["conv"]),
                 "--report", str(files["report"]), *extra, stdout=out, stderr=StringIO())
    return out.getvalue(), json.loads((files["report"] / "report.json").read_text())


def test_extractive_answers_are_scored_per_kind(files, no_llm):
    out, report = _evaluate(files)
    summaries = report["summaries"]
    assert set(summaries) == {"factoid", "section", "unanswerable", "offtopic", "first", "follow-up", "new-topic",
                              "follow-up (standalone)", "answerable"}
    factoid = summaries["factoid"]
    assert factoid["n"] == 2 and factoid["abstained"] == 0.0
    assert factoid["evidence"] == 1.0 and factoid["right_document"] == 1.0
    assert factoid["valid_citations"] == 1.0 and factoid["cites"] == 1.0
    rows = {row["id"]: row for row in report["rows"] if row["kind"] == "factoid"}
    assert factoid["chars"] == pytest.approx((len(rows["q1"]["text"]) + len(rows["q2"]["text"])) / 2)
    assert rows["q1"]["cited_sources"] == ["deploy.md"]
    assert summaries["offtopic"]["abstained"] == 1.0
    assert summaries["answerable"]["abstained"] == 0.0
    assert 'PASS  off-topic answered "not found": 1.00 (target >= 0.95)' in out
    assert 'PASS  false "not found" on answerable questions: 0.00 (target <= 0.05)' in out
    assert {t["name"] for t in report["targets"]} >= {"right document cited on topic switches",
                                                      "evidence in the answer, factoids"}
    header = next(line for line in out.splitlines() if line.startswith("kind"))
    assert header.split() == ["kind", "n", "evidence", "baseline", "right", "doc", "page", "in", "sources", "chars",
                              "cites", "valid", "[n]", "abstained"]


def test_turns_by_kind_standalone_follow_ups_baseline_and_declined_near_topic_questions(files, no_llm):
    # One run for several checks: each run answers every question of the fixture.
    _, report = _evaluate(files)
    turns = {row["id"]: row for row in report["rows"]
             if row["id"].startswith("c") and row["kind"] != "follow-up (standalone)"}
    # c1 is the older two-turn format: its first turn only builds the history.
    assert set(turns) == {"c1#2", "c2#1", "c2#2", "c2#3"}
    assert [turns[i]["kind"] for i in ("c1#2", "c2#1", "c2#2", "c2#3")] == ["follow-up", "first", "follow-up",
                                                                           "new-topic"]
    standalone = [row for row in report["rows"] if row["kind"] == "follow-up (standalone)"]
    assert [(row["id"], row["question"]) for row in standalone] == [("c2#2", "How do I change the request timeout?")]
    switch = turns["c2#3"]
    assert switch["cited_sources"] and set(switch["cited_sources"]) == {"bread.txt"}
    # The page is right exactly when the answer cites page 2 of bread.txt.
    assert switch["page_right"] == (["bread.txt", 2] in switch["cited_pages"])
    assert report["summaries"]["new-topic"]["page_right"] == float(switch["page_right"])

    rows = {row["id"]: row for row in report["rows"]}
    # The best chunk for q1 holds its phrase in its first 550 characters.
    assert rows["q1"]["baseline_evidence"] == 1.0
    factoid = report["summaries"]["factoid"]
    assert factoid["baseline_evidence"] == pytest.approx((rows["q1"]["baseline_evidence"]
                                                          + rows["q2"]["baseline_evidence"]) / 2)

    row = rows["u1"]
    assert row["kind"] == "unanswerable" and row["near"] == "deploy.md"
    assert report["summaries"]["unanswerable"]["abstained"] == float(row["abstained"])


def test_a_set_that_does_not_fit_the_stored_text_is_refused(files, tmp_path, no_llm):
    broken = _write(tmp_path / "broken.jsonl", [{**ITEMS[1], "page": 1}, {**ITEMS[0], "evidence": ["sixty seconds"]}])
    with pytest.raises(CommandError) as raised:
        call_command("evaluate_answers", str(broken), "--collection", "guides", "--report", str(tmp_path / "r"),
                     stdout=StringIO())
    message = str(raised.value)
    assert "2 problem(s)" in message
    assert "q2: the evidence is on page(s) [2] of bread.txt, not 1" in message
    assert "q1: not in the stored text of deploy.md: 'sixty seconds'" in message
    near = _write(tmp_path / "near.jsonl", [{**UNANSWERABLE[0], "absent": ["exponential backoff"]}])
    with pytest.raises(CommandError, match="u1: deploy.md does say 'exponential backoff'"):
        call_command("evaluate_answers", str(files["eval"]), "--collection", "guides", "--unanswerable", str(near),
                     "--report", str(tmp_path / "r"), stdout=StringIO())


def test_llm_answers_are_grounded_before_they_are_scored(files, fake_llm):
    # The model cites a source that does not exist: the grounding pass removes it and, since source 1
    # holds the sentence, cites that instead.
    def reply(request):
        if is_rewrite_request(request):
            return "How many times are failed requests retried?"
        return "The request timeout is thirty seconds by default [9]."

    fake_llm.reply = reply
    out, report = _evaluate(files)
    first = next(row for row in report["rows"] if row["id"] == "q1")
    assert first["mode"] == "llm" and first["raw_valid_citations"] is False
    assert first["valid_citations"] is True and first["text"] == "The request timeout is thirty seconds by default [1]."
    assert report["summaries"]["factoid"]["raw_valid_citations"] < 1.0
    assert report["summaries"]["factoid"]["valid_citations"] == 1.0
    assert "LLM fake-model" in out.splitlines()[0]


def test_bad_files_are_a_command_error(files, tmp_path, no_llm):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "turns": ["only one"]}\n')
    with pytest.raises(CommandError, match="turns must be a list of at least two turns"):
        call_command("evaluate_answers", str(files["eval"]), "--collection", "guides", "--conversations", str(bad),
                     stdout=StringIO())
    with pytest.raises(CommandError, match="No collection 'nope'"):
        call_command("evaluate_answers", str(files["eval"]), "--collection", "nope", stdout=StringIO())


def test_markers_are_not_words_of_the_answer():
    assert without_markers("thirty seconds [1] by default [2, 3].") == "thirty seconds   by default  ."
