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
                  "source": "deploy.md", "evidence": ["retried twice"]}]


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def files(tmp_path):
    collection = make_collection("guides")
    make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)
    make_document(collection, source="bread.txt", title="Bread", parts=COOKING, media_type="text/plain")
    return {"eval": _write(tmp_path / "eval.jsonl", ITEMS), "off": _write(tmp_path / "off.jsonl", OFFTOPIC),
            "conv": _write(tmp_path / "conv.jsonl", CONVERSATIONS), "report": tmp_path / "report"}


def _evaluate(files, *extra):
    out = StringIO()
    call_command("evaluate_answers", str(files["eval"]), "--collection", "guides", "--offtopic", str(files["off"]),
                 "--conversations", str(files["conv"]), "--report", str(files["report"]), *extra,
                 stdout=out, stderr=StringIO())
    return out.getvalue(), json.loads((files["report"] / "report.json").read_text())


def test_extractive_answers_are_scored_per_kind(files, no_llm):
    out, report = _evaluate(files)
    summaries = report["summaries"]
    assert set(summaries) == {"factoid", "section", "offtopic", "follow-up", "follow-up (alone)", "answerable"}
    factoid = summaries["factoid"]
    assert factoid["n"] == 2 and factoid["abstained"] == 0.0
    assert factoid["evidence"] == 1.0 and factoid["right_document"] == 1.0
    assert factoid["valid_citations"] == 1.0 and factoid["cites"] == 1.0
    rows = {row["id"]: row for row in report["rows"] if row["kind"] == "factoid"}
    assert factoid["chars"] == pytest.approx((len(rows["q1"]["text"]) + len(rows["q2"]["text"])) / 2)
    assert rows["q1"]["cited_sources"] == ["deploy.md"]
    assert summaries["offtopic"]["abstained"] == 1.0
    assert summaries["answerable"]["abstained"] == 0.0
    assert "Abstention: off-topic abstained 1.00 (target >= 0.90); answerable abstained 0.00" in out
    header = next(line for line in out.splitlines() if line.startswith("kind"))
    assert header.split() == ["kind", "n", "evidence", "right", "doc", "in", "sources", "chars", "cites", "valid",
                              "[n]", "abstained"]


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
    with pytest.raises(CommandError, match="turns must be a list of at least two questions"):
        call_command("evaluate_answers", str(files["eval"]), "--collection", "guides", "--conversations", str(bad),
                     stdout=StringIO())
    with pytest.raises(CommandError, match="No collection 'nope'"):
        call_command("evaluate_answers", str(files["eval"]), "--collection", "nope", stdout=StringIO())


def test_markers_are_not_words_of_the_answer():
    assert without_markers("thirty seconds [1] by default [2, 3].") == "thirty seconds   by default  ."
