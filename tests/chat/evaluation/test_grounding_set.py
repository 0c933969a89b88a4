"""The labelled grounding set (chat.evaluation.grounding_set) and its scoring (chat.evaluation.grounding_eval):
the rules that make claims, the committed set's labels, and the side-by-side table (no database, no model)."""

import pytest

from chat.evaluation import grounding_eval, grounding_set
from chat.evaluation.grounding_eval import Scored
from chat.evaluation.grounding_set import Claim, change_fact, paraphrase_by_rules
from chat.evaluation.metrics import normalise

SOURCE = ("Ninja reads build.ninja from the current directory. Pass -C to change directory first, "
          "or -f to read another file. The default weight value is 50, and the maximum is 100.")


def test_a_fact_changed_changes_one_number_name_or_negation():
    assert change_fact("The default weight value is 50, and the maximum is 100.", SOURCE, 0) == (
        "The default weight value is 100, and the maximum is 100.", "number 50 -> 100")
    changed, how = change_fact("Pass -C to change directory first.", SOURCE, 1)
    assert (changed, how) == ("Pass -f to change directory first.", "name -C -> -f")  # a name the source holds
    assert change_fact("Globs MUST match case-insensitively.", SOURCE, 2) == (
        "Globs MUST NOT match case-insensitively.", "negation 'MUST' -> 'MUST NOT'")
    assert change_fact("Nothing here to change at all", SOURCE, 0) is None


def test_a_paraphrase_by_rules_rewords_and_moves_the_condition_but_keeps_names():
    assert paraphrase_by_rules("If the file is missing, ninja creates a new directory.") == (
        "Ninja makes a new folder if the file is missing.")
    # value=NULL is code, not the word "value"; one change is not a paraphrase
    assert paraphrase_by_rules("Use value=NULL to delete the element.") is None


@pytest.mark.parametrize("name", list(grounding_set.SETS))
def test_the_committed_set_is_labelled_by_kind_and_cites_its_own_sentences(name):
    claims = grounding_set.load(name)
    assert {c.kind for c in claims} == set(grounding_set.KINDS)
    for claim in claims:
        assert claim.set == name
        assert claim.supported == (claim.kind in grounding_set.SUPPORTED_KINDS)
        assert normalise(claim.sentence) in normalise(claim.source)  # made from a sentence of its source
        if claim.kind == "verbatim":
            assert claim.claim == claim.sentence
        if claim.kind == "other_document":
            assert normalise(claim.claim) not in normalise(claim.source)
    # held-out sets: none of their documents is in the development set
    if name != grounding_set.DEVELOPMENT:
        development = {c.doc for c in grounding_set.load(grounding_set.DEVELOPMENT)}
        assert not development & {c.doc for c in claims}


def _claim(kind: str, how: str = "") -> Claim:
    return Claim(f"x-{kind}", "development", "d", kind, "claim", "source",
                 kind in grounding_set.SUPPORTED_KINDS, "sentence", how)


def test_figures_count_kinds_precision_recall_and_only_the_reads_a_method_makes():
    scored = [Scored(_claim("verbatim"), overlap=1.0, reader=0.9, cpu=0.004),
              Scored(_claim("paraphrase", "written"), overlap=0.6, reader=0.1, cpu=0.004),
              Scored(_claim("other_document"), overlap=0.6, reader=0.01, cpu=0.004),
              Scored(_claim("fact_changed"), overlap=1.0, reader=0.7, cpu=0.004)]
    overlap = grounding_eval.figures("overlap", scored, 0.5)
    assert overlap.per_kind == {"verbatim": 1.0, "paraphrase": 1.0, "other_document": 0.0, "fact_changed": 0.0}
    assert (overlap.precision, overlap.recall, overlap.ms_per_claim, overlap.written) == (0.5, 1.0, 0.0, 1.0)
    both = grounding_eval.figures("overlap and reader", scored, 0.5)
    assert both.per_kind == {"verbatim": 1.0, "paraphrase": 0.0, "other_document": 1.0, "fact_changed": 0.0}
    assert both.written == 0.0 and both.ms_per_claim == pytest.approx(4.0)  # every claim overlap keeps is read
    either = grounding_eval.figures("overlap or reader", scored, 0.5)
    assert either.ms_per_claim == 0.0  # overlap keeps all four: the reader reads none


def test_the_threshold_is_chosen_on_the_development_set_and_applied_to_the_others():
    development = [Scored(_claim("verbatim"), 1.0, 0.9), Scored(_claim("other_document"), 0.6, 0.3)]
    held_out = [Scored(_claim("verbatim"), 1.0, 0.35), Scored(_claim("other_document"), 0.6, 0.2)]
    assert grounding_eval.tune("reader", development) == 0.35  # the lowest that flags 0.3
    lines = grounding_eval.table({"development": development, "pdf-manuals": held_out})
    reader_rows = [line for line in lines if line.startswith("| reader |")]
    assert [row.split(" | ")[1] for row in reader_rows] == ["0.35", "0.35"]
    assert any(line.startswith("pdf-manuals (held out;") for line in lines)
