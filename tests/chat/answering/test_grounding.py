from chat.answering.grounding import UNSUPPORTED_NOTE, ground, is_meta, marker_numbers

SOURCES = {
    1: "The request timeout is thirty seconds by default. Set REQUEST_TIMEOUT in the settings file to change it.",
    2: "Failed requests are retried twice with exponential backoff before giving up.",
    3: "Bread needs flour, water, salt and yeast. Bake the loaf for thirty five minutes.",
    4: "Logs are written to standard output in JSON lines format.",
}


def test_a_citation_of_a_missing_source_is_replaced_by_the_supporting_one():
    grounded = ground("The request timeout is thirty seconds by default [9].", SOURCES)
    assert grounded.text == "The request timeout is thirty seconds by default [1]."
    assert grounded.cited == (1,) and grounded.removed == (9,) and grounded.added == 1
    assert not grounded.partly_unsupported


def test_an_uncited_sentence_gets_the_source_that_clearly_supports_it():
    grounded = ground("Failed requests are retried twice with exponential backoff.\n\n"
                      "Logs are written to standard output as JSON lines.", SOURCES)
    assert grounded.text == ("Failed requests are retried twice with exponential backoff [2].\n\n"
                             "Logs are written to standard output as JSON lines [4].")
    assert grounded.cited == (2, 4)


def test_a_wrong_citation_moves_to_the_source_that_supports_the_sentence():
    grounded = ground("Failed requests are retried twice with exponential backoff [3].", SOURCES)
    assert grounded.text == "Failed requests are retried twice with exponential backoff [2]."
    assert grounded.removed == (3,)


def test_an_unsupported_sentence_stays_uncited_and_marks_the_answer():
    text = "The timeout is thirty seconds by default [1]. The moon orbits the earth every month [2]."
    grounded = ground(text, SOURCES)
    assert grounded.text == ("The timeout is thirty seconds by default [1]. The moon orbits the earth every month."
                             f"\n\n{UNSUPPORTED_NOTE}")
    assert grounded.unsupported == 1 and grounded.partly_unsupported and grounded.cited == (1,)


def test_valid_citations_leave_the_text_untouched_and_lists_stay_lists():
    text = ("Two things matter:\n\n- The timeout: thirty seconds by default [1].\n"
            "- Failed requests are retried twice [2][1].\n\n```\nREQUEST_TIMEOUT = 30  [7]\n```")
    grounded = ground(text, SOURCES)
    assert grounded.text.splitlines()[2] == "- The timeout: thirty seconds by default [1]."
    assert grounded.text.splitlines()[3] == "- Failed requests are retried twice [2]."  # [1] does not support it
    assert "REQUEST_TIMEOUT = 30  [7]" in grounded.text  # code is left alone
    assert grounded.cited == (1, 2)


def test_sentences_about_the_sources_are_not_claims():
    grounded = ground("The sources do not say how to bake a cake.", SOURCES)
    assert grounded.text == "The sources do not say how to bake a cake."
    assert grounded.declined and not grounded.partly_unsupported and grounded.cited == ()
    assert is_meta("The provided documents don't mention it.")
    assert not is_meta("The timeout is not configurable per view.")


def test_marker_forms():
    assert marker_numbers("a [1] b [2, 3] c [Source 4] d [1][5]") == [1, 2, 3, 4, 1, 5]
    assert ground("Thirty seconds [Source 1].", SOURCES).cited == (1,)
