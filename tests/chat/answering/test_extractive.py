import numpy as np

from chat.answering.extractive import Hit, candidates, extractive_answer, question_coverage, split_sentences


def _word_similarity(word):
    # A stand-in for embeddings in the fast unit tests: a sentence that mentions `word` points
    # the query's way (likeness 1.0), any other is orthogonal to it.
    def embed(query, sentences):
        return np.array([1.0, 0.0]), np.array([[1.0, 0.0] if word in s.lower() else [0.0, 1.0] for s in sentences])
    return embed


def _no_similarity(query, sentences):
    return np.zeros(2), np.zeros((len(sentences), 2))


def _bullets(answer):
    return [line for line in answer.splitlines() if line.startswith("- ")]


def test_split_sentences_skips_code_tables_and_headings_markup():
    text = ("# Settings\n\nThe timeout is set in seconds. It defaults to sixty seconds.\n\n"
            "```\nTIMEOUT = 60  # not prose at all\n```\n| a | b |\n|---|---|\n"
            "- Retries are limited to two attempts.\n")
    assert split_sentences(text) == [
        "The timeout is set in seconds.",
        "It defaults to sixty seconds.",
        "Retries are limited to two attempts.",
    ]


def test_split_sentences_joins_wrapped_lines_and_skips_rest_literal_blocks():
    text = ("Path converters\n===============\n\nThe following path converters are available by\n"
            "default in :func:`~django.urls.path` patterns. Each one matches a part of\nthe URL.\n\n"
            "For example::\n\n    path('articles/<int:year>/', views.year_archive)\n\n"
            ".. versionadded:: 5.0\n\nRegister custom converter classes in your URLconf using\nregister_converter.\n")
    assert split_sentences(text) == [
        "The following path converters are available by default in `path` patterns.",
        "Each one matches a part of the URL.",
        "Register custom converter classes in your URLconf using register_converter.",
    ]


def test_a_tilde_underline_is_a_heading_not_a_code_fence():
    text = ("Non-atomic migrations\n~~~~~~~~~~~~~~~~~~~~~\n\nMigrations run inside a transaction by default.\n\n"
            ".. code-block:: python\n\n    atomic = False\n\nWithin such a migration, nothing runs in a transaction.\n")
    assert split_sentences(text) == ["Migrations run inside a transaction by default.",
                                     "Within such a migration, nothing runs in a transaction."]


def test_extractive_answer_puts_the_sentence_that_answers_first():
    citations = [
        {"n": 1, "document": {"id": 1}, "text": "Cats sleep most of the day. They like warm places to rest."},
        {"n": 2, "document": {"id": 2},
         "text": "The request timeout is thirty seconds by default. Change it in the settings file."},
    ]
    answer = extractive_answer("What is the request timeout?", citations, embed=_word_similarity("timeout"))
    lines = answer.splitlines()
    assert lines[0] == "- The request timeout is thirty seconds by default. [2]"  # the quotes, no label
    assert "Cats" not in answer  # a weak sentence of another document does not pad the answer


def test_extractive_answer_uses_words_without_embeddings():
    def broken(query, sentences):
        raise RuntimeError("no model")

    citations = [{"n": 1, "text": "Nothing to see in this sentence here. The port number is 8000 for runserver."}]
    answer = extractive_answer("runserver port number", citations, embed=broken)
    assert _bullets(answer)[0] == "- The port number is 8000 for runserver. [1]"


def test_a_sentence_ending_in_a_colon_keeps_the_list_it_introduces():
    text = ("Path converters\n---------------\n\nThe following path converters are available by default:\n\n"
            "* ``str`` - Matches any non-empty string, excluding the path separator.\n"
            "* ``int`` - Matches zero or any positive integer.\n\nUnrelated closing remarks follow here today.\n")
    answer = extractive_answer("Which path converters are available?", [{"n": 1, "text": text}],
                               embed=_word_similarity("available"))
    lines = answer.splitlines()
    assert lines[:3] == ["- The following path converters are available by default: [1]",
                         "    - `str` - Matches any non-empty string, excluding the path separator.",
                         "    - `int` - Matches zero or any positive integer."]
    assert sum("Matches zero" in line for line in lines) == 1  # an item is not quoted twice


def test_the_retrieved_chunk_relevance_picks_between_equal_sentences():
    # Two paragraphs, each a chunk of its own (chunk boundaries fall between blocks).
    text = "Backups are copied every night to the server.\n\nBackups are copied every week to the tape."
    second = text.index("Backups are copied every week")
    citation = {"n": 1, "document": {"id": 7}, "char_start": 100, "text": text}
    hits = [Hit(document=7, start=100, end=100 + second, relevance=0.1),
            Hit(document=7, start=100 + second, end=100 + len(text), relevance=0.9)]
    # Room for one sentence (the best is always taken): quotes follow their source's order otherwise.
    answer = extractive_answer("When are backups copied?", [citation], hits=hits, embed=_no_similarity, max_chars=45)
    assert _bullets(answer) == ["- Backups are copied every week to the tape. [1]"]


def test_a_question_in_the_source_hands_its_score_to_its_answer():
    text = ("Why does the loader skip hidden files in the folder? Because editors leave swap files there. "
            "Other loaders read every file they find.")
    answer = extractive_answer("Why does the loader skip hidden files?", [{"n": 1, "text": text}],
                               embed=_word_similarity("hidden"))
    assert _bullets(answer)[0] == "- Because editors leave swap files there. [1]"


def test_sentences_from_other_documents_join_only_when_nearly_as_good():
    citations = [{"n": 1, "document": {"id": 1}, "text": "Uploads are limited to fifty megabytes per file."},
                 {"n": 2, "document": {"id": 2}, "text": "The limit on uploads is also shown in the admin."},
                 {"n": 3, "document": {"id": 3}, "text": "Uploads are limited to fifty megabytes per file in total."}]
    answer = extractive_answer("How large may uploads be? fifty megabytes", citations, embed=_no_similarity)
    assert [line[-3:] for line in _bullets(answer)] == ["[1]", "[3]"]


def test_the_answer_stays_within_its_budget():
    text = " ".join(f"Sentence number {i} talks about the cache backend." for i in range(40))
    answer = extractive_answer("cache backend", [{"n": 1, "text": text}], embed=_no_similarity)
    quoted = [line[2:].rsplit(" [", 1)[0] for line in _bullets(answer)]
    assert 1 < len(quoted) and sum(map(len, quoted)) <= 550


def test_extractive_answer_without_sentences_points_at_the_sources():
    answer = extractive_answer("anything", [{"n": 1, "text": "```\ncode only\n```"}])
    assert answer == "The passages found hold code or tables rather than sentences to quote; open them: [1]."


def test_a_fact_already_quoted_gives_its_room_to_one_the_answer_lacks():
    # Two sentences say the same thing (the same vector) and match the query best; a third says
    # something else, a little less close. With room for two, the fact is quoted once and the
    # room goes to the other sentence.
    same, other = [1.0, 0.0], [0.0, 1.0]
    text = ("Sessions are saved when the view code changes them. "
            "Sessions are saved once the view has modified them. "
            "Set the modified flag to save the session after a nested change.")
    vectors = {"Sessions are saved when the view code changes them.": same,
               "Sessions are saved once the view has modified them.": same,
               "Set the modified flag to save the session after a nested change.": other}

    def embed(query, sentences):
        return np.array([0.7, 0.5]), np.array([vectors[s] for s in sentences])

    answer = extractive_answer("When are sessions saved?", [{"n": 1, "text": text}], embed=embed, max_chars=130)
    quoted = [line[2:].rsplit(" [", 1)[0] for line in _bullets(answer)]
    assert len(quoted) == 2
    assert "Set the modified flag to save the session after a nested change." in quoted


def test_question_coverage_weighs_the_question_s_rarer_words():
    citations = [{"n": 1, "document": {"id": 1}, "text": "The request timeout is thirty seconds by default. "
                  "Requests are logged. Requests are retried twice."}]
    sentences = candidates(citations)
    held = question_coverage("What is the request timeout?", citations, sentences)
    missing = question_coverage("Which port does the request listener use?", citations, sentences)
    assert held == 1.0 and missing < 0.35
    assert question_coverage("What is it?", citations, sentences) == 1.0  # nothing named: nothing missing


def test_question_coverage_meets_a_word_ending_in_e_in_another_form():
    # "employees" and "employee", "degrees" and "degree": one word, or the question looks uncovered
    # and a plainly answered question is "not found" (ANSWER_MIN_COVERAGE).
    citations = [{"n": 1, "document": {"id": 1}, "text": "Every employee has 28 days of paid holiday per year. "
                  "The heating starts below 12 degrees. The office opens at 8:30."}]
    sentences = candidates(citations)
    assert question_coverage("Which holiday do employees have?", citations, sentences) == 1.0
    assert question_coverage("At which degree does the heating start?", citations, sentences) == 1.0


def test_a_configured_cross_encoder_decides_the_meaning_of_each_sentence(settings, monkeypatch):
    from chat.retrieval import rerank

    citations = [{"n": 1, "document": {"id": 1}, "text": "The request timeout is thirty seconds by default. "
                  "Change the request timeout in the settings file when requests are slow."}]
    settings.RERANKER_MODEL = "/models/cross-encoder"
    read = []

    def cross_encoder(query, texts):
        read.append((query, texts))
        return [1.0 if "settings file" in t else 0.0 for t in texts]

    monkeypatch.setattr(rerank, "cross_encoder_scorer", cross_encoder)
    answer = extractive_answer("request timeout", citations, embed=_no_similarity)
    assert answer.splitlines()[0].startswith("- Change the request timeout in the settings file")
    assert read and read[0][0] == "request timeout"
    settings.RERANKER_MODEL = ""
    assert extractive_answer("request timeout", citations, embed=_no_similarity).splitlines()[0].startswith(
        "- The request timeout is thirty seconds")


def test_a_bracketed_number_inside_a_quoted_sentence_is_not_a_citation():
    """A footnote mark such as "[2]" in the source text is quoted as text: it cites nothing, and the
    chat links only the answer's own [1] (review round 3)."""
    from chat.answering.citations import cited_numbers
    from chat.answering.prompts import format_sources
    from chat.markdown import link_citations, render_markdown

    citations = [
        {"n": 1, "document": {"id": 1}, "title": "Guide",
         "text": "The request timeout is thirty seconds [2] by default. See also [1, 2]."},
        {"n": 2, "document": {"id": 2}, "title": "Cats", "text": "Cats sleep most of the day."},
    ]
    answer = extractive_answer("What is the request timeout?", citations, embed=_word_similarity("timeout"))
    assert _bullets(answer)[0].startswith("- The request timeout is thirty seconds [") and "2]" in answer
    assert cited_numbers(answer) == [1]
    html = link_citations(str(render_markdown(answer)), {1: "/c/1", 2: "/c/2"})
    assert html.count('class="cite"') == 1 and 'href="/c/2"' not in html
    # Nor does an LLM see it as a source number in its prompt.
    assert cited_numbers(format_sources(citations).split("\n", 1)[1].split("\n\n")[0]) == []


def test_the_best_quote_comes_first_and_the_rest_keep_the_order_of_their_source():
    # The best sentence ("She ... lantern") is what answers: it leads; the others follow in the page's order.
    citation = {"n": 1, "document": {"id": 1}, "text": (
        "Ms. Halvorsen guides the zebras across the river each spring. The herd waits on the bank for the lantern. "
        "She carries the lantern across the river at dawn.")}
    answer = extractive_answer("Who carries the lantern across the river?", [citation],
                               embed=_word_similarity("lantern"))
    quoted = [line.removesuffix(" [1]").removeprefix("- ") for line in _bullets(answer)]
    assert quoted[0] == "She carries the lantern across the river at dawn." and len(quoted) >= 2
    positions = [citation["text"].index(sentence) for sentence in quoted[1:]]
    assert positions == sorted(positions)


def test_a_quote_that_points_back_brings_the_sentence_it_points_to():
    citation = {"n": 1, "document": {"id": 1}, "text": (
        'Rules-Requires-Root takes "no" or "binary-targets". If "no", the package builds without root. '
        "This is the default and the status quo. Builders read the field.")}
    answer = extractive_answer("What is the default of Rules-Requires-Root?", [citation],
                               embed=_word_similarity("default"))
    assert _bullets(answer)[0] == ('- If "no", the package builds without root. '
                                   "This is the default and the status quo. [1]")


def test_a_document_that_is_one_long_hash_line_is_still_quoted():
    text = ("# The request timeout is thirty seconds by default. Change it in the settings file. "
            "Every client reads the same file at start-up, so restart them after a change. " * 3).strip()
    answer = extractive_answer("What is the request timeout?", [{"n": 1, "text": text}],
                               embed=_word_similarity("timeout"))
    assert _bullets(answer)[0] == "- The request timeout is thirty seconds by default. [1]"


def test_a_table_row_with_an_empty_cell_names_each_cell_by_its_own_column():
    # A leave tracker whose "Days" column is blank: "FALSE" is the Approved cell, not the Days one.
    text = ("| Employee | Start | Days | Approved |\n| --- | --- | --- | --- |\n"
            "| Tom Becker | 2027-04-12 |  | FALSE |\n|  | 2027-05-03 | 5 | TRUE |")
    rows = [s.text for s in candidates([{"n": 1, "document": {"id": 1}, "text": text}], rows=True) if s.row]
    assert rows == ["Employee: Tom Becker; Start: 2027-04-12; Approved: FALSE",
                    "Start: 2027-05-03; Days: 5; Approved: TRUE"]
    # Listed under the sentence that introduces the table, a row shows its cells, the empty ones left out.
    introduced = candidates([{"n": 1, "document": {"id": 1}, "text": f"Leave booked this spring:\n\n{text}"}])
    assert introduced[0].items[1] == "Tom Becker — 2027-04-12 — FALSE"
