"""Follow-ups without an LLM: the conversation supplies the subject a follow-up leans on."""

import pytest

from chat.answering.rewrite import clean_rewrite, contextual_query, leans_on_conversation, rewrite_query


def test_a_referring_follow_up_carries_the_subject_of_the_question_before():
    history = [("user", "What is RSE?"), ("assistant", "RSE extracts relevant segments [1].")]
    assert contextual_query("What presets does it have?", history) == "What presets does it have? (RSE)"


def test_a_question_that_stands_alone_is_searched_as_asked():
    history = [("user", "What is the messages framework?"), ("assistant", "It stores messages [1].")]
    question = "How do I write a custom management command for my app?"
    assert not leans_on_conversation(question)
    assert contextual_query(question, history) == question


def test_short_and_continuing_follow_ups_lean_on_the_conversation():
    assert leans_on_conversation("And in templates?")
    assert leans_on_conversation("Why?")
    assert leans_on_conversation("And how is prefetch_related different?")
    assert not leans_on_conversation("How do I exclude a field from a ModelForm?")


def test_a_chain_of_follow_ups_keeps_its_subject():
    history = [("user", "What does select_related do?"), ("assistant", "It joins [1]."),
               ("user", "Is it faster?"), ("assistant", "Often [1].")]
    assert contextual_query("When should I avoid it?", history) == "When should I avoid it? (faster select_related)"


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
