"""The committed reader model (reader/model): it loads without a download and reads the question
with each candidate. Cases written for this test, in no training or evaluation set."""

import numpy as np

from reader import runtime


def test_the_row_of_the_thing_asked_about_is_read_as_the_answer():
    p = runtime.score("Where is the lawn roller kept?", [
        "Garden tools (Sheet1): Tool: Lawn roller; Store: Shed 3; Count: 1",
        "Garden tools (Sheet1): Tool: Hedge shears; Store: Shed 1; Count: 2",
    ])
    assert p.dtype == np.float32 and p.shape == (2,)
    assert p[0] > 0.8 and p[1] < 0.2


def test_the_definition_that_answers_beats_its_sibling():
    p = runtime.score("What is the default timeout of connect?", [
        "connect — Parameters: retries (int): How many times to retry a refused connection.",
        "connect — Parameters: timeout (float): Seconds to wait for the server. Defaults to 10.",
    ])
    assert p[1] > 0.8 > p[0]


def test_no_candidates_no_scores():
    assert runtime.score("Anything?", []).shape == (0,)
