from chat.answering.citations import cited_numbers


def test_cited_numbers_in_order_of_first_citation():
    assert cited_numbers("Retried twice [2]. Timeout is 60 s [1, 2]. Again [2].") == [2, 1]


def test_brackets_inside_code_are_not_citations():
    # An LLM answer's example code indexes lists; the page does not link those brackets either.
    text = ("Use a partial unique constraint [1].\n\n```python\nrows = columns[0]\nfirst = rows[9]\n```\n"
            "Then call `items[3]` once [2].\n\n~~~\nnever[7] closed")
    assert cited_numbers(text) == [1, 2]


def test_sources_are_numbered_as_the_answer_cites_them():
    from chat.answering.citations import numbered_by_answer

    citations = [{"n": n, "document": {"id": 10 + n}, "text": f"source {n}"} for n in (1, 2, 3)]
    renumbered, numbers = numbered_by_answer(citations, [3, 2, 3])
    assert numbers == {3: 1, 2: 2, 1: 3}
    assert [(c["n"], c["document"]["id"]) for c in renumbered] == [(1, 13), (2, 12), (3, 11)]
    assert [c["n"] for c in citations] == [1, 2, 3]  # copies: the originals are left as they were
