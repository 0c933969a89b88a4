import json

import pytest

from chat.evaluation import EvalFormatError, coverage, first_source_rank, joined, load_items, normalise, percentile


def test_normalise_lowercases_and_collapses_punctuation():
    assert normalise("  Hello, World!\n``path()`` -- ok ") == "hello world path ok"


def test_coverage_counts_whole_word_phrases_only():
    evidence = ["Matches any non-empty string", "excluding the path separator"]
    assert coverage(evidence, "It MATCHES any non-empty\nstring, excluding the path-separator.") == 1.0
    assert coverage(evidence, "rematches any non-empty string") == 0.0  # not on a word boundary
    assert coverage(evidence, "excluding the path separator") == 0.5
    assert coverage([], "anything") == 0.0


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
