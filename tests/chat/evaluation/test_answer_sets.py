"""The answer evaluation's set formats, the check against the stored text, and the targets (no database)."""

import json
import math
from types import SimpleNamespace

import pytest

from chat.evaluation.answer_sets import Turn, load_conversations, load_offtopic, load_unanswerable
from chat.evaluation.metrics import EvalFormatError, Item, load_items
from chat.evaluation.set_check import StoredCorpus, normalised_with_offsets, phrase_offsets, set_problems
from chat.evaluation.targets import Target, check_targets, follow_up_gap


def _write(path, rows):
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return path


TURNS = [{"question": "What is asn1Coding?", "kind": "first", "source": "a.pdf", "evidence": ["DER encoding"],
          "page": 8},
         {"question": "What format does its input use?", "kind": "follow-up", "source": "a.pdf",
          "evidence": ["must have this syntax"], "page": 8, "standalone": "What format does asn1Coding read?"},
         {"question": "Just to keep the history going", "kind": "new-topic"}]


def test_multi_turn_conversations_keep_every_turn(tmp_path):
    [conversation] = load_conversations(_write(tmp_path / "c.jsonl", [{"id": "c1", "turns": TURNS}]))
    assert conversation.id == "c1"
    assert [t.kind for t in conversation.turns] == ["first", "follow-up", "new-topic"]
    assert conversation.turns[1] == Turn(question="What format does its input use?", kind="follow-up",
                                         source="a.pdf", evidence=("must have this syntax",), page=8,
                                         standalone="What format does asn1Coding read?")
    assert conversation.turns[2].source is None  # asked, not scored


def test_the_two_turn_format_is_read_as_an_unscored_first_turn(tmp_path):
    path = _write(tmp_path / "c.jsonl", [{"id": "old", "kind": "new-topic", "turns": ["What is X?", "And Y?"],
                                          "source": "y.txt", "evidence": ["y is"]}])
    [conversation] = load_conversations(path)
    first, second = conversation.turns
    assert (first.kind, first.source) == ("first", None)
    assert (second.question, second.kind, second.source, second.evidence) == ("And Y?", "new-topic", "y.txt",
                                                                              ("y is",))


@pytest.mark.parametrize("turns, message", [
    ([TURNS[0]], "at least two turns"),
    ([TURNS[1], TURNS[0]], "the first turn, and only it, must be of kind first"),
    ([TURNS[0], {**TURNS[1], "standalone": None}], "standalone must be a non-empty string"),
    ([TURNS[0], {**TURNS[1], "kind": "aside"}], "turn kind must be one of first, follow-up, new-topic"),
    ([TURNS[0], {**TURNS[1], "page": 0}], "page must be a page number"),
    ([TURNS[0], "a question among turn objects"], "each turn must be a JSON object"),
])
def test_bad_conversations_are_refused_with_the_line(tmp_path, turns, message):
    path = _write(tmp_path / "c.jsonl", [{"id": "c1", "turns": turns}])
    with pytest.raises(EvalFormatError, match=message) as raised:
        load_conversations(path)
    assert f"{path}:1" in str(raised.value)


def test_unanswerable_questions_name_their_document_and_what_it_lacks(tmp_path):
    good = {"id": "u1", "question": "What is the value of X?", "kind": "unanswerable", "near": "a.pdf",
            "absent": ["X is"]}
    [item] = load_unanswerable(_write(tmp_path / "u.jsonl", [good]))
    assert (item.id, item.near, item.absent) == ("u1", "a.pdf", ("X is",))
    with pytest.raises(EvalFormatError, match="absent must name what the document does not say"):
        load_unanswerable(_write(tmp_path / "u2.jsonl", [{**good, "absent": []}]))
    with pytest.raises(EvalFormatError, match="near must be a non-empty string"):
        load_unanswerable(_write(tmp_path / "u3.jsonl", [{**good, "near": ""}]))
    with pytest.raises(EvalFormatError, match="id 'u1' is used twice"):
        load_unanswerable(_write(tmp_path / "u4.jsonl", [good, good]))
    with pytest.raises(EvalFormatError, match="not JSON"):
        load_offtopic(_write(tmp_path / "o.jsonl", ["{not json"]))


def test_items_may_give_the_page_of_their_evidence(tmp_path):
    row = {"id": "p1", "question": "q?", "kind": "factoid", "source": "a.pdf", "evidence": ["e f g"]}
    items = load_items(_write(tmp_path / "i.jsonl", [{**row, "page": 3}, {**row, "id": "p2"}]))
    assert [i.page for i in items] == [3, None]
    with pytest.raises(EvalFormatError, match="page must be a page number"):
        load_items(_write(tmp_path / "j.jsonl", [{**row, "page": "3"}]))


def test_normalised_offsets_point_back_into_the_text():
    text = "Héllo,  World!\n--The ::= token"
    norm, offsets = normalised_with_offsets(text)
    assert norm == "h llo world the token"  # as metrics.normalise: é is not a-z
    assert [text[offsets[i]] for i in (0, 6, 12)] == ["H", "W", "T"]
    assert phrase_offsets("the token", text) == [text.index("The")]
    assert phrase_offsets("world the", text) == [text.index("World")]
    assert phrase_offsets("orld", text) == []  # whole words only
    assert phrase_offsets("llo", "llo x llo") == [0, 6]


def _document(source, text, pages=()):
    def page_at(offset):
        return max((n for n, start in enumerate(pages, start=1) if start <= offset), default=None)
    return SimpleNamespace(source=source, text=text, pages=list(pages), page_at=page_at)


def test_the_set_check_finds_missing_phrases_wrong_pages_and_answerable_questions():
    text = "Page one talks about globs.\n\nPage two: the default weight value is 50."
    corpus = StoredCorpus([_document("spec.pdf", text, pages=[0, text.index("Page two")]),
                           _document("notes.md", "Plain notes.")])
    good = Item(id="i1", question="q", kind="factoid", source="spec.pdf",
                evidence=("The default weight value is 50",), page=2)
    assert set_problems(corpus, items=[good]) == []
    problems = set_problems(corpus, items=[
        Item(id="i2", question="q", kind="factoid", source="spec.pdf", evidence=("default weight",), page=1),
        Item(id="i3", question="q", kind="factoid", source="spec.pdf", evidence=("weight is 60",)),
        Item(id="i4", question="q", kind="factoid", source="gone.pdf", evidence=("x",)),
        Item(id="i5", question="q", kind="factoid", source="notes.md", evidence=("Plain notes",), page=1),
    ])
    assert problems == [
        "i2: the evidence is on page(s) [2] of spec.pdf, not 1",
        "i3: not in the stored text of spec.pdf: 'weight is 60'",
        "i4: no document with source 'gone.pdf' in the collection",
        "i5: page 1 given, but notes.md has no pages",
    ]


def test_the_set_check_covers_unanswerable_questions_and_conversation_turns(tmp_path):
    corpus = StoredCorpus([_document("a.pdf", "asn1Coding writes a DER encoding.", pages=[0])])
    near = load_unanswerable(_write(tmp_path / "u.jsonl", [
        {"id": "u1", "question": "q", "near": "a.pdf", "absent": ["BER", "DER encoding"]}]))
    conversations = load_conversations(_write(tmp_path / "c.jsonl", [{"id": "c1", "turns": TURNS}]))
    assert set_problems(corpus, unanswerable=near, conversations=conversations) == [
        "u1: a.pdf does say 'DER encoding': the question may be answerable",
        "c1 turn 1: the evidence is on page(s) [1] of a.pdf, not 8",
        "c1 turn 2: not in the stored text of a.pdf: 'must have this syntax'",
    ]


def test_targets_pass_and_fail_on_their_figures():
    summaries = {
        "unanswerable": {"abstained": 0.8}, "offtopic": {"abstained": 0.9},
        "answerable": {"abstained": 0.0}, "new-topic": {"right_document": 1.0},
        "follow-up": {"right_document": 0.5},
        "factoid": {"evidence": 0.81, "baseline_evidence": 0.6, "chars": 640.0, "page_right": 0.70,
                    "page_right_quoted": 0.97},
    }
    rows = [{"id": "c#2", "kind": "follow-up", "evidence": 0.5}, {"id": "c#3", "kind": "follow-up", "evidence": 1.0},
            {"id": "c#2", "kind": "follow-up (standalone)", "evidence": 1.0}]
    targets = {t.name: t for t in check_targets(summaries, rows, evidence_target=0.80)}
    assert targets['near-topic unanswerable answered "not found"'].passed
    assert not targets['off-topic answered "not found"'].passed
    assert targets['false "not found" on answerable questions'].passed
    assert not targets["right document cited on follow-ups"].passed
    gap = targets["follow-up evidence minus the same question asked alone"]
    assert gap.value == pytest.approx(-0.5) and not gap.passed  # only c#2 has a standalone twin
    evidence = targets["evidence in the answer, factoids"]
    assert evidence.passed and evidence.line() == ("PASS  evidence in the answer, factoids: 0.81 "
                                                   "(target >= 0.80; naive baseline 0.60)")
    assert not targets["mean answer length, factoids (characters)"].passed
    page = targets["cited page right, PDF factoids quoting the evidence"]
    assert page.passed and page.note == "over every PDF factoid 0.70"
    assert not check_targets(summaries, rows, evidence_target=0.85)[6].passed


def test_targets_without_their_questions_are_left_out():
    assert check_targets({"offtopic": {"abstained": 1.0}}, [], evidence_target=0.85) == [
        Target('off-topic answered "not found"', 1.0, ">=", 0.95)]
    assert follow_up_gap([{"id": "x", "kind": "follow-up", "evidence": 1.0}])[2] == 0
    assert not Target("no questions answered", math.nan, ">=", 0.5).passed
