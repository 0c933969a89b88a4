import numpy as np

from chat.answering.extractive import LABEL, extractive_answer, split_sentences


def _word_similarity(query, sentences):
    # A stand-in for embeddings in the fast unit tests: 1.0 if the sentence mentions "timeout".
    return np.array([1.0 if "timeout" in s.lower() else 0.0 for s in sentences])


def test_split_sentences_skips_code_tables_and_headings_markup():
    text = ("# Settings\n\nThe timeout is set in seconds. It defaults to sixty seconds.\n\n"
            "```\nTIMEOUT = 60  # not prose at all\n```\n| a | b |\n|---|---|\n"
            "- Retries are limited to two attempts.\n")
    assert split_sentences(text) == [
        "The timeout is set in seconds.",
        "It defaults to sixty seconds.",
        "Retries are limited to two attempts.",
    ]


def test_extractive_answer_picks_best_sentences_with_citations():
    citations = [
        {"n": 1, "text": "Cats sleep most of the day. They like warm places to rest."},
        {"n": 2, "text": "The request timeout is thirty seconds by default. Change it in the settings file."},
    ]
    answer = extractive_answer("What is the request timeout?", citations, max_sentences=2,
                               similarity=_word_similarity)
    lines = answer.splitlines()
    assert lines[0].startswith(f"*{LABEL}")
    assert lines[2] == "- The request timeout is thirty seconds by default. [2]"
    assert len([line for line in lines if line.startswith("- ")]) == 2


def test_extractive_answer_uses_term_overlap_without_embeddings():
    def broken(query, sentences):
        raise RuntimeError("no model")

    citations = [{"n": 1, "text": "Nothing to see in this sentence here. The port number is 8000 for runserver."}]
    answer = extractive_answer("runserver port number", citations, max_sentences=1, similarity=broken)
    assert answer.endswith("- The port number is 8000 for runserver. [1]")


def test_extractive_answer_without_sentences_says_so():
    answer = extractive_answer("anything", [{"n": 1, "text": "```\ncode only\n```"}])
    assert LABEL in answer
    assert "no sentence" in answer


def test_split_sentences_joins_wrapped_lines_and_skips_rest_literal_blocks():
    text = ("Path converters\n===============\n\nThe following path converters are available by\n"
            "default in :func:`~django.urls.path` patterns. Each one matches a part of\nthe URL.\n\n"
            "For example::\n\n    path('articles/<int:year>/', views.year_archive)\n\n"
            ".. versionadded:: 5.0\n\nRegister custom converter classes in your URLconf using\nregister_converter.\n")
    assert split_sentences(text) == [
        "The following path converters are available by default in `~django.urls.path` patterns.",
        "Each one matches a part of the URL.",
        "Register custom converter classes in your URLconf using register_converter.",
    ]
