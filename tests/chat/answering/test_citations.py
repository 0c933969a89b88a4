from chat.answering.citations import cited_numbers


def test_cited_numbers_in_order_of_first_citation():
    assert cited_numbers("Retried twice [2]. Timeout is 60 s [1, 2]. Again [2].") == [2, 1]


def test_brackets_inside_code_are_not_citations():
    # An LLM answer's example code indexes lists; the page does not link those brackets either.
    text = ("Use a partial unique constraint [1].\n\n```python\nrows = columns[0]\nfirst = rows[9]\n```\n"
            "Then call `items[3]` once [2].\n\n~~~\nnever[7] closed")
    assert cited_numbers(text) == [1, 2]
