"""Follow-ups without an LLM: the in-context query carries the previous question's key words
(the pipeline decides whether to use it: tests/chat/answering/test_conversation_search.py)."""

import pytest

from chat.answering.rewrite import clean_rewrite, contextual_query, refers_back, rewrite_query


def test_a_referring_follow_up_carries_the_subject_of_the_question_before():
    history = [("user", "What is RSE?"), ("assistant", "RSE extracts relevant segments [1].")]
    assert contextual_query("What presets does it have?", history) == "What presets does it have? (RSE)"


def test_questions_that_point_into_the_conversation_refer_back():
    assert refers_back("And in templates?")
    assert refers_back("What presets does it have?")
    assert refers_back("What about the timeout?")
    assert refers_back("What if the upload is larger?")  # a variation on what was asked before
    assert not refers_back("What does RSE do?")  # short, but it names its subject
    assert not refers_back("How do I make sure that a field is unique?")  # "that" joins a clause
    assert not refers_back("How do I exclude a field from a ModelForm?")


def test_a_what_if_follow_up_lends_its_subject_to_the_next_one():
    history = [("user", "What does mydestination control?"), ("assistant", "The domains delivered locally [1]."),
               ("user", "What if the server handles a whole domain?"), ("assistant", "List $mydomain too [1].")]
    assert contextual_query("Can I list an alias domain in it?", history) == \
        "Can I list an alias domain in it? (server handles whole mydestination control)"


def test_a_that_ending_a_clause_is_a_pronoun_pointing_back():
    assert refers_back("My receiver runs twice, how do I stop that?")
    assert refers_back("Can I do this, and how?")
    assert not refers_back("Is there a way to know that the queue is empty?")


def test_a_fragment_of_two_words_points_back_and_a_short_question_naming_its_subject_does_not():
    for fragment in ("How often?", "Why?", "Since when?", "Which one?"):
        assert refers_back(fragment), fragment
    assert not refers_back("What is RSE?")
    assert not refers_back("How do I bake sourdough bread?")


def test_a_chain_of_follow_ups_keeps_its_subject_one_step_back():
    history = [("user", "What does select_related do?"), ("assistant", "It joins [1]."),
               ("user", "Is it faster?"), ("assistant", "Often [1].")]
    assert contextual_query("When should I avoid it?", history) == "When should I avoid it? (faster select_related)"


def test_conversation_words_never_pile_up():
    history = [("user", "How do I add documents?"), ("assistant", "Upload them [1]."),
               ("user", "and how do I re-ingest one?"), ("assistant", "Press re-ingest [1]."),
               ("user", "What does RSE do?"), ("assistant", "It extracts segments [1].")]
    # Only the previous question's words (it names its own subject, so nothing further back).
    assert contextual_query("Which presets does it have?", history) == "Which presets does it have? (RSE)"
    assert "ingest" not in contextual_query("What does chunking do?", history)


def test_words_already_asked_are_not_repeated():
    history = [("user", "How does the cache framework work?")]
    assert contextual_query("Can I cache the entire site with it?", history) == \
        "Can I cache the entire site with it? (framework)"


@pytest.mark.usefixtures("no_llm")
def test_without_an_llm_rewrite_query_builds_the_query_from_the_conversation():
    assert rewrite_query("What presets does it have?", [("user", "What is RSE?")]) == \
        "What presets does it have? (RSE)"
    assert rewrite_query("What presets does it have?", []) == "What presets does it have?"


def test_clean_rewrite_takes_the_bare_query():
    assert clean_rewrite('\n  Query: "How are failed requests retried?"\nBecause...') == \
        "How are failed requests retried?"
    assert clean_rewrite("   \n") == ""
