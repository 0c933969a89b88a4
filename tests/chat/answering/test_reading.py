"""The extractive answer as the reader chooses it, with a stand-in for the model (the model
itself is tested in tests/reader/test_runtime.py)."""

import numpy as np
import pytest

from chat.answering import extractive, reading
from chat.answering.extractive import UNSURE, render_quotes, select_quotes


def _embed(query, texts):
    return np.array([1.0, 0.0]), np.array([[0.5, 0.5]] * len(texts))


@pytest.fixture
def reader(monkeypatch):
    """A reader that finds a candidate as likely as the first of `likely` ({word: probability}) it holds."""
    likely = {}

    def score(question, texts):
        return np.array([next((p for word, p in likely.items() if word in t), 0.05) for t in texts])

    monkeypatch.setattr(reading.runtime, "score", score)
    with reading.using(reading.READER):
        yield likely


def _citation(n, text, doc=None):
    return {"n": n, "text": text, "document": {"id": doc or n}, "char_start": 0}


SOURCE = ("## Weights\n\nGlob patterns are matched against file names. Each pattern has a weight. "
          "The default weight is 50 and the maximum is 100. Patterns are read in order.")


def test_the_most_likely_answer_is_quoted_first(reader):
    reader.update({"default weight": 0.95, "Each pattern": 0.8, "read in order": 0.6})
    quotes = select_quotes("What is the default weight?", [_citation(1, SOURCE)], embed=_embed)
    assert quotes.sentences[0].text == "The default weight is 50 and the maximum is 100."
    assert quotes.answers and quotes.sure and quotes.confidence == pytest.approx(0.95)
    assert [s.text for s in quotes.sentences][1:] == ["Each pattern has a weight."]
    assert not render_quotes(quotes, [_citation(1, SOURCE)]).endswith(f"*{UNSURE}*")


def test_nothing_likely_enough_means_the_sources_do_not_answer(reader):
    reader.update({"default weight": 0.2})
    quotes = select_quotes("Which release added weights?", [_citation(1, SOURCE)], embed=_embed)
    assert not quotes.answers


def test_a_fairly_likely_answer_says_it_may_not_answer(reader):
    reader.update({"default weight": 0.5})
    quotes = select_quotes("What is the weight?", [_citation(1, SOURCE)], embed=_embed)
    assert quotes.answers and not quotes.sure
    assert render_quotes(quotes, [_citation(1, SOURCE)]).endswith(f"*{UNSURE}*")


def test_a_sentence_that_points_back_is_quoted_with_what_it_points_to(reader):
    text = ('Rules-Requires-Root may be "no" or "binary-targets". If "no", nothing needs root to build. '
            'This is the default. If "binary-targets", the old behaviour applies.')
    reader.update({"This is the default": 0.9})
    quotes = select_quotes("What is the default of Rules-Requires-Root?", [_citation(1, text)], embed=_embed)
    assert quotes.sentences[0].text == 'If "no", nothing needs root to build. This is the default.'


def test_a_table_row_is_quoted_under_its_header(reader):
    header = "| Item | Location | Quantity |\n| --- | --- | --- |\n"
    table = (f"Sheet: Tools\n\n{header}| Rake | Barn | 2 |\n| Rotavator | Shed 2 | 1 |\n\n"
             f"{header}| Spade | Shed 1 | 4 |\n")
    reader.update({"Rotavator": 0.92})
    quotes = select_quotes("Where is the rotavator kept?", [_citation(1, table)], embed=_embed)
    assert [s.text for s in quotes.sentences] == ["Item: Rotavator; Location: Shed 2; Quantity: 1"]
    assert "Item: Rotavator; Location: Shed 2; Quantity: 1 [1]" in render_quotes(quotes, [_citation(1, table)])


def test_the_repeated_header_of_a_long_table_is_not_a_row(reader):
    header = "| Item | Location |\n| --- | --- |\n"
    table = f"{header}| Rake | Barn |\n\n{header}| Hoe | Shed |\n"
    reader.update({"Item": 0.9})
    quotes = select_quotes("Where is the hoe?", [_citation(1, table)], embed=_embed)
    assert {s.text for s in quotes.sentences} <= {"Item: Rake; Location: Barn", "Item: Hoe; Location: Shed"}


def test_a_failing_reader_falls_back_to_the_heuristic(monkeypatch):
    def broken(question, texts):
        raise RuntimeError("model file damaged")

    monkeypatch.setattr(reading.runtime, "score", broken)
    with reading.using(reading.READER):
        quotes = select_quotes("What is the default weight?", [_citation(1, SOURCE)], embed=_embed)
    assert quotes.sentences and quotes.confidence is None and quotes.answers


GUIDE_AND_TABLE = ("The rotavator is only used in spring, to break up the vegetable beds. "
                   "Keep the blades oiled over winter.\n\n"
                   "| Item | Location |\n| --- | --- |\n| Rotavator | Shed B (north wall) |\n| Spade | Barn |\n")


def _heuristic_prefers(monkeypatch, word):
    """The heuristic ranks the sentences holding `word` first, the rest by their order."""
    def scores(query, sentences, embed=None, **kwargs):
        values = [(1.0 if word in s.text else 0.5) - i / 100 for i, s in enumerate(sentences)]
        return extractive.Scored(values, np.zeros((len(sentences), 2)))

    monkeypatch.setattr(extractive, "score_sentences", scores)


@pytest.fixture
def auto(monkeypatch):
    likely = {}
    monkeypatch.setattr(reading.runtime, "score", lambda question, texts: np.array(
        [next((p for word, p in likely.items() if word in t), 0.05) for t in texts]))
    with reading.using(reading.AUTO):
        yield likely


def test_auto_lets_the_reader_choose_a_row_the_heuristic_ranked_below_prose(auto, monkeypatch):
    _heuristic_prefers(monkeypatch, "only used in spring")
    auto.update({"Shed B": 0.9, "only used in spring": 0.3})
    quotes = select_quotes("Where is the rotavator kept?", [_citation(1, GUIDE_AND_TABLE)], embed=_embed)
    assert quotes.sentences[0].text == "Item: Rotavator; Location: Shed B (north wall)"
    assert quotes.confidence == pytest.approx(0.9) and quotes.sure


def test_auto_keeps_the_heuristics_prose_when_the_reader_prefers_prose(auto, monkeypatch):
    _heuristic_prefers(monkeypatch, "only used in spring")
    auto.update({"blades oiled": 0.8, "Shed B": 0.2})
    quotes = select_quotes("When is the rotavator used?", [_citation(1, GUIDE_AND_TABLE)], embed=_embed)
    assert quotes.sentences[0].text.startswith("The rotavator is only used in spring")
    # The heuristic's answer, which the reader only rates (its first quote: 0.05 here): not sure.
    assert not quotes.read and quotes.answers
    assert quotes.confidence == pytest.approx(0.05) and not quotes.sure


ROTA = ("| Day | Kitchen | Bins |\n| --- | --- | --- |\n| Monday | Farah | Gus |\n| Tuesday | Gus | Ilse |\n"
        "| Wednesday | Ilse | Marek |\n")


def test_the_rows_of_one_table_go_in_the_heuristics_order(reader, monkeypatch):
    # The reader rates every row of the rota alike (the Monday row a little above); the heuristic
    # ranks the row that names the day first.
    _heuristic_prefers(monkeypatch, "Tuesday")
    reader.update({"Monday": 0.98, "Tuesday": 0.96, "Wednesday": 0.95})
    quotes = select_quotes("Who cleans the kitchen on Tuesday?", [_citation(1, ROTA)], embed=_embed)
    assert [s.text for s in quotes.sentences] == ["Day: Tuesday; Kitchen: Gus; Bins: Ilse"]
    # How sure the answer is: the reader's probability for the row it quotes.
    assert quotes.confidence == pytest.approx(0.96) and quotes.answers and quotes.sure


def test_rows_the_heuristic_scores_alike_are_quoted_together(reader, monkeypatch):
    monkeypatch.setattr(extractive, "score_sentences", lambda query, sentences, embed=None, **kwargs: extractive.Scored(
        [1.0 if "Gus" in s.text else 0.3 for s in sentences], np.zeros((len(sentences), 2))))
    reader.update({"Monday": 0.9, "Tuesday": 0.92, "Wednesday": 0.9})
    quotes = select_quotes("Which days is Gus on the rota?", [_citation(1, ROTA)], embed=_embed)
    assert [s.text for s in quotes.sentences] == ["Day: Monday; Kitchen: Farah; Bins: Gus",
                                                  "Day: Tuesday; Kitchen: Gus; Bins: Ilse"]


def test_the_heuristics_row_unlikely_by_the_reader_is_not_found(reader, monkeypatch):
    _heuristic_prefers(monkeypatch, "Tuesday")
    reader.update({"Monday": 0.9, "Tuesday": 0.1})
    quotes = select_quotes("Who cleans the windows on Tuesday?", [_citation(1, ROTA)], embed=_embed)
    assert not quotes.answers and quotes.confidence == pytest.approx(0.1)


OFFICES = ("| Office | Manager | Desks |\n| --- | --- | --- |\n| Bristol | Ann Hale | 40 |\n"
           "| Leeds | Raj Patel | 25 |\n| London | Eve Stone | 120 |\n")


def _heuristic_counts_words(monkeypatch):
    """The heuristic scores a sentence by how many of the query's longer words it holds."""
    def scores(query, sentences, embed=None, **kwargs):
        words = {w.strip("?()").lower() for w in query.split() if len(w.strip("?()")) > 3}
        return extractive.Scored([0.5 + 0.1 * sum(w in s.text.lower() for w in words) for s in sentences],
                                 np.zeros((len(sentences), 2)))

    monkeypatch.setattr(extractive, "score_sentences", scores)


def test_a_follow_up_on_a_table_quotes_the_row_the_conversation_is_about(reader, monkeypatch):
    _heuristic_counts_words(monkeypatch)
    reader.update({"Bristol": 0.97, "Leeds": 0.96, "London": 0.96})  # alike, as the reader rates rows
    quotes = select_quotes("And how many desks does it have?", [_citation(1, OFFICES)], embed=_embed,
                           searched="And how many desks does it have? (manages Leeds office)")
    assert quotes.sentences[0].text == "Office: Leeds; Manager: Raj Patel; Desks: 25"
    # A follow-up that names another row gets that row.
    quotes = select_quotes("And Bristol?", [_citation(1, OFFICES)], embed=_embed,
                           searched="And Bristol? (manages Leeds office)")
    assert quotes.sentences[0].text == "Office: Bristol; Manager: Ann Hale; Desks: 40"
