import json
import re

import pytest

from chat.evaluation.management.commands.evaluate import compare_mrr
from chat.evaluation.metrics import (
    EvalFormatError,
    bootstrap_interval,
    coverage,
    first_source_rank,
    joined,
    load_items,
    normalise,
    percentile,
)


def test_normalise_lowercases_and_collapses_punctuation():
    assert normalise("  Hello, World!\n``path()`` -- ok ") == "hello world path ok"


def test_coverage_counts_whole_word_phrases_only():
    evidence = ["Matches any non-empty string", "excluding the path separator"]
    assert coverage(evidence, "It MATCHES any non-empty\nstring, excluding the path-separator.") == 1.0
    assert coverage(evidence, "rematches any non-empty string") == 0.0  # not on a word boundary
    assert coverage(evidence, "excluding the path separator") == 0.5
    assert coverage([], "anything") is None  # nothing to cover: left out of the averages


def test_first_source_rank_within_cutoff():
    assert first_source_rank(["a", "b", "c", "b"], "b") == 2
    assert first_source_rank(["a"] * 10 + ["b"], "b") is None


def test_joined_cuts_to_limit():
    assert joined(["abc", "def"]) == "abc\n\ndef"
    assert joined(["abc", "def"], 5) == "abc\n\n"


def test_percentile_picks_nearest_rank():
    assert percentile([5, 1, 3, 2, 4], 50) == 3
    assert percentile(list(range(1, 101)), 95) == 95


def test_load_items_reads_and_validates(tmp_path):
    good = {"id": "x", "question": "q?", "kind": "factoid", "source": "a.txt", "evidence": ["p"]}
    path = tmp_path / "eval.jsonl"
    path.write_text(json.dumps(good) + "\n\n")
    [item] = load_items(path)
    assert (item.id, item.kind, item.evidence) == ("x", "factoid", ("p",))
    path.write_text(json.dumps({**good, "kind": "essay"}))
    with pytest.raises(EvalFormatError, match="kind"):
        load_items(path)
    path.write_text("{not json")
    with pytest.raises(EvalFormatError, match=":1:"):
        load_items(path)


GOOD = {"id": "x", "question": "q?", "kind": "factoid", "source": "a.txt", "evidence": ["p"]}


@pytest.mark.parametrize(("line", "message"), [
    ("[1, 2]", "a JSON object is needed"),
    (json.dumps({"id": "x", "question": "q?"}), "missing kind, source, evidence"),
    (json.dumps({**GOOD, "question": 42}), "question must be a non-empty string"),
    (json.dumps({**GOOD, "question": "   "}), "question must be a non-empty string"),
    (json.dumps({**GOOD, "source": None}), "source must be a non-empty string"),
    (json.dumps({**GOOD, "id": [1]}), "id must be a string or a number"),
    (json.dumps({**GOOD, "id": True}), "id must be a string or a number"),
    # A string is iterable: without the check it became one "phrase" per character.
    (json.dumps({**GOOD, "evidence": "a phrase"}), "evidence must be a list"),
    (json.dumps({**GOOD, "evidence": ["ok", 3]}), "evidence must be a list"),
    (json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "question": "other?"}), ":2: id 'x' is used twice"),
])
def test_load_items_rejects_wrong_types_with_the_line(tmp_path, line, message):
    path = tmp_path / "eval.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(EvalFormatError, match=re.escape(message)):
        load_items(path)


def test_load_items_rejects_a_binary_file(tmp_path):
    path = tmp_path / "eval.jsonl"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with pytest.raises(EvalFormatError, match="not UTF-8 text"):
        load_items(path)
    path.write_text(json.dumps({**GOOD, "id": 7, "evidence": []}))
    assert load_items(path)[0].id == "7"


def test_bootstrap_interval_brackets_the_mean_and_narrows_with_more_questions():
    values = [1.0, 0.5, 0.0, 1.0, 1.0, 0.33, 1.0, 0.0, 1.0, 0.5]
    low, high = bootstrap_interval(values)
    assert low < sum(values) / len(values) < high
    assert 0.0 <= low and high <= 1.0
    wide = high - low
    low, high = bootstrap_interval(values * 10)
    assert high - low < wide / 2  # ~1/sqrt(10) as wide
    assert bootstrap_interval(values) == bootstrap_interval(values)  # fixed seed: reproducible
    assert bootstrap_interval([0.25] * 5) == (0.25, 0.25)


def test_paired_difference_of_identical_runs_is_zero_and_of_a_better_run_positive():
    ranks = [1, 2, None, 1, 3, 1, 1, 5, 1, 2] * 3
    rows = {"hybrid": [{"rank": r} for r in ranks], "vector": [{"rank": r} for r in ranks],
            "bm25": [{"rank": None if r == 1 else r} for r in ranks]}
    compared = compare_mrr(rows)
    assert compared["hybrid - vector"] == {"difference": 0.0, "interval": (0.0, 0.0)}
    better = compared["hybrid - bm25"]
    assert better["difference"] == pytest.approx(0.5)  # hybrid's rank-1 answers, which bm25 misses: 15 of 30
    assert 0.0 < better["interval"][0] < 0.5 < better["interval"][1]
