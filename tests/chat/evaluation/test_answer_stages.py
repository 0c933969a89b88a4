"""manage.py answer_stages: what the reader is asked to do per answer is what the answer asks of it."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from chat.answering import reading
from chat.evaluation.management.commands import answer_stages
from corpus.models import Collection
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db

ROTA = ["# Rota\n\n| Day | Kitchen | Bins |\n| --- | --- | --- |\n| Monday | Farah | Gus |\n"
        "| Tuesday | Gus | Ilse |\n| Wednesday | Ilse | Marek |\n"]


@pytest.fixture
def calls(monkeypatch):
    """Which of the reader's two jobs each answer asks for (the real model does them)."""
    made = []
    read, rate = reading.read, reading.rate
    monkeypatch.setattr(reading, "read", lambda *a, **k: made.append("read") or read(*a, **k))
    monkeypatch.setattr(reading, "rate", lambda *a, **k: made.append("rate") or rate(*a, **k))
    return made


def test_prose_is_rated_and_a_table_read_and_the_shortlist_read_apart(calls):
    prose = make_collection("guides")
    make_document(prose, source="deploy.md", title="Deployment guide", parts=GUIDE)
    tables = make_collection("rota")
    make_document(tables, source="rota.md", title="Rota", parts=ROTA)
    with reading.using(reading.AUTO):
        timings = answer_stages.time_answer("What is the default request timeout?",
                                            Collection.objects.filter(pk=prose.pk))
        assert calls == ["rate", "read"]  # the answer's rating, then the shortlist timed apart
        assert set(answer_stages.STAGES) <= set(timings) and timings["shortlist"] > 0
        calls.clear()
        answer_stages.time_answer("Who cleans the kitchen on Tuesday?", Collection.objects.filter(pk=tables.pk))
        assert calls == ["read", "read"]
    calls.clear()
    with reading.using(reading.HEURISTIC):
        timings = answer_stages.time_answer("What is the default request timeout?",
                                            Collection.objects.filter(pk=prose.pk))
    assert calls == [] and timings["reader"] == timings["shortlist"] == 0.0


def test_the_command_prints_every_stage_per_round(tmp_path):
    make_document(make_collection("guides"), source="deploy.md", title="Deployment guide", parts=GUIDE)
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "How are failed requests retried?", "kind": "factoid",
                                     "source": "deploy.md", "evidence": ["retried twice"]}) + "\n")
    out = StringIO()
    call_command("answer_stages", str(questions), "--collection", "guides", "--rounds", "2", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[1].split()[:12] == ["round", *answer_stages.STAGES]
    assert [line.split()[0] for line in lines[2:]] == ["1", "2"]
    with pytest.raises(CommandError, match="No collection"):
        call_command("answer_stages", str(questions), "--collection", "nope")
