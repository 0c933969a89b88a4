import random

from chat.evaluation.reader_training.corpus import Doc, parse_docstring
from chat.evaluation.reader_training.questions import questions_for
from chat.evaluation.reader_training.tables import SCHEMAS, table_questions

NUMPY_STYLE = '''
Compute the sum of array elements over a given axis.

Parameters
----------
a : array_like
    Elements to sum.
axis : int, optional
    Axis along which the sum is taken. By default, all elements are summed.

Returns
-------
out : ndarray
    An array with the same shape as `a`, with the axis removed.

Examples
--------
>>> add_up([1, 2])
3
'''


def test_a_numpy_docstring_gives_terms_with_their_definitions_and_no_examples():
    sections = parse_docstring(NUMPY_STYLE, "demo.add_up")
    assert sections[0].units == ["Compute the sum of array elements over a given axis."]
    parameters = sections[1]
    assert parameters.heading == "demo.add_up — Parameters"
    assert parameters.terms == ["a", "axis"]
    assert parameters.units[1] == "axis (int, optional): Axis along which the sum is taken. " \
                                  "By default, all elements are summed."
    assert not any(">>>" in unit for s in sections for unit in s.units)


def test_questions_point_at_the_unit_that_answers_them():
    doc = Doc("demo.add_up", "demo", "MIT", parse_docstring(NUMPY_STYLE, "demo.add_up"), function=True)
    questions = questions_for(doc, random.Random(1), other_terms=["keepdims"])
    answered = {q.text: doc.sections[q.section].units[q.unit] for q in questions if q.section >= 0}
    assert any("axis" in text and unit.startswith("axis") for text, unit in answered.items())
    assert any("default" in text and unit.startswith("axis") for text, unit in answered.items())
    # A term the document does not define makes a question nothing in it answers.
    assert any(q.section == -1 and "keepdims" in q.text for q in questions)


def test_table_questions_name_a_row_of_their_table_or_none():
    questions = table_questions(SCHEMAS[0], random.Random(3), 40)
    assert any(q.answer == -1 for q in questions) and any(q.answer >= 0 for q in questions)
    for q in questions:
        if q.answer >= 0:
            key = q.rows[q.answer].split(";")[0].split(": ", 1)[1]
            assert key.lower() in q.text.lower()
