"""manage.py reader_probe: the heuristic and reader models side by side on an answer set's candidates."""

import json
import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from reader.runtime import MODEL_DIR
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db

ITEMS = [{"id": "q1", "question": "What is the default request timeout?", "kind": "factoid", "source": "deploy.md",
          "evidence": ["The request timeout is thirty seconds by default"]},
         {"id": "q2", "question": "How are failed requests retried?", "kind": "factoid", "source": "deploy.md",
          "evidence": ["Failed requests are retried twice with exponential backoff"]}]
UNANSWERABLE = [{"id": "u1", "question": "Which port does the deployed service listen on?", "kind": "unanswerable",
                 "near": "deploy.md", "absent": ["port"]}]


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_the_probe_prints_each_scorer_on_the_same_candidates(tmp_path):
    make_document(make_collection("guides"), source="deploy.md", title="Deployment guide", parts=GUIDE)
    copy = tmp_path / "copy"
    shutil.copytree(MODEL_DIR, copy)
    out = StringIO()
    call_command("reader_probe", str(_write(tmp_path / "q.jsonl", ITEMS)), "--collection", "guides",
                 "--unanswerable", str(_write(tmp_path / "u.jsonl", UNANSWERABLE)),
                 "--model", str(MODEL_DIR), "--model", str(copy), "--dump", str(tmp_path / "dump.jsonl"), stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("2 answerable questions (2 with the evidence in the shortlist")
    rows = {name.strip(): values for name, *values in (line.rsplit(None, 6) for line in lines[2:])}
    shipped, copied = str(MODEL_DIR)[-44:], str(copy)[-44:]
    assert set(rows) == {"heuristic", shipped, copied, "heuristic order, model sure", "heuristic order, copy sure",
                         "heuristic top 3, model best", "heuristic top 3, copy best"}
    # The same model twice reads the same candidates the same way.
    assert rows[shipped] == rows[copied]
    assert rows["heuristic order, model sure"] == rows["heuristic order, copy sure"]
    assert rows["heuristic top 3, model best"] == rows["heuristic top 3, copy best"]
    # Both questions are easy: whoever ranks first holds the evidence.
    assert all(float(values[0]) == 1.0 for values in rows.values())
    # The dump holds each question's shortlist as scored, for trying combinations offline.
    dumped = [json.loads(line) for line in (tmp_path / "dump.jsonl").read_text().splitlines()]
    assert [(d["question"], d["answerable"]) for d in dumped] == [
        (ITEMS[0]["question"], True), (ITEMS[1]["question"], True), (UNANSWERABLE[0]["question"], False)]
    first = dumped[0]
    assert set(first["scores"]) == {"heuristic", str(MODEL_DIR), str(copy)}
    assert first["scores"][str(MODEL_DIR)] == first["scores"][str(copy)]
    assert len(first["holds"]) == len(first["scores"]["heuristic"]) and any(first["holds"])
    assert not any(dumped[2]["holds"])


def test_a_folder_without_a_model_is_refused(tmp_path):
    make_collection("guides")
    with pytest.raises(CommandError, match="holds no reader.onnx"):
        call_command("reader_probe", str(_write(tmp_path / "q.jsonl", ITEMS)), "--collection", "guides",
                     "--model", str(tmp_path))


def test_the_operating_point_reads_the_threshold_off_the_answerable_questions():
    from chat.evaluation.management.commands.reader_probe import at_false_rate

    answerable = [0.2] + [0.9] * 19  # one in twenty below 0.9: the threshold is 0.2
    assert at_false_rate(answerable, [0.1, 0.15, 0.5, 0.95]) == 0.5
    assert at_false_rate(answerable, []) != at_false_rate(answerable, [])  # nan: no unanswerable question
