import random

from chat.evaluation.reader_training.build import HARD_NEGATIVES, faq_groups, generated_pairs
from chat.evaluation.reader_training.corpus import Doc, Section, parse_docstring
from chat.evaluation.reader_training.generated import accept
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


PROSE = Doc("demo.Client.send", "demo", "MIT", [Section("demo.Client.send", [
    "Sends the prepared request to the server and waits for its response.",
    "The client waits 30 seconds for the server before it gives up; pass timeout=None to wait forever.",
    "Redirects are followed up to ten times unless allow_redirects is false.",
    "Cookies the server sets are stored in the session's cookie jar.",
    "Streaming responses must be closed by the caller to return the connection to the pool.",
], [""] * 5)])


class _Words:
    """A stand-in bi-encoder with a known geometry: texts are vectors of the words they hold."""

    VOCABULARY = ["wait", "timeout", "seconds", "redirect", "cookie", "stream", "close", "server", "pool"]

    def __call__(self, texts):
        import numpy as np

        rows = np.array([[float(w in t.lower()) for w in self.VOCABULARY] + [0.1] for t in texts])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_generated_question_is_kept_only_when_it_is_about_its_sentence():
    prompt = "demo.Client.send: " + PROSE.sections[0].units[1]
    assert accept("How long does the client wait for the server?\nAnswer: 30", prompt) == \
        "How long does the client wait for the server?"
    assert accept("What is the capital of France?", prompt) is None  # about something else
    assert accept("What is the answer to this question? How long?", prompt) is None
    assert accept("The client waits 30 seconds for the server?", prompt) is None  # the sentence copied
    assert accept("How long does it wait", prompt) is None  # not a question


def test_generated_questions_bring_hard_negatives_and_an_unanswerable_copy():
    asked = [(0, 1, "How many seconds does it wait for the server before a timeout?", PROSE.sections[0].units[1]),
             (0, 4, "Who must close a streaming response?", PROSE.sections[0].units[4]),
             # Written for a unit that now reads differently (another package version): left out.
             (0, 2, "How many redirects are followed?", "Redirects are followed up to five times.")]
    pairs = generated_pairs(PROSE, asked, _Words(), count=0)
    by_group = {}
    for pair in pairs:
        by_group.setdefault(pair["g"], []).append(pair)
    assert not any("redirects are followed" in p["q"] for p in pairs)
    answerable = [g for g in by_group.values() if any(p["y"] for p in g)]
    assert len(answerable) == 2
    written_for = {q: unit for _, _, q, unit in asked}
    for group in answerable:
        positives = [p["c"] for p in group if p["y"]]
        assert len(positives) == 1 and written_for[group[0]["q"]] in positives[0]
        assert len(group) == 1 + HARD_NEGATIVES
    gone = [g for name, g in by_group.items() if name.endswith("-gone")]
    assert len(gone) == 1 and all(p["y"] == 0 for p in gone[0])
    assert not any("30 seconds" in p["c"] for p in gone[0])  # the answer removed


LSOF_STYLE = """Table of contents

1.0\tGeneral Concepts

1.6\tIs there a test
\tsuite?

\tYes, as of revision 4.63 there is an automated test suite in
\tthe tests/ directory.

\t    $ make
\t    $ cd tests

\tFrequently asked questions about it are answered here.

1.7\tBuilding lsof fails.

\tNot a question, so not an entry.
"""

XZ_STYLE = """XZ Utils FAQ
============

Q:  What do the letters XZ mean?

A:  Nothing. They are just two letters, which come from the file format
    suffix .xz.
"""

RST_STYLE = """Programming FAQ
===============

How do I iterate over a sequence in reverse order?
--------------------------------------------------

Use the :func:`reversed` built-in function::

   for x in reversed(sequence):
       ...  # do something with x ...

This won't touch your original sequence.

.. _faq-other:

Why is it called Python?
------------------------

It is named after a comedy series.
"""


def test_faq_files_of_three_layouts_give_questions_with_their_answers_sentences():
    from chat.evaluation.reader_training.faq import parse_numbered, parse_qa, parse_rst

    lsof = list(parse_numbered(LSOF_STYLE, "lsof/00FAQ"))
    assert [e["question"] for e in lsof] == ["Is there a test suite?"]  # on two lines; "fails." is no question
    assert lsof[0]["chapter"] == "General Concepts"
    assert lsof[0]["answer"] == ["Yes, as of revision 4.63 there is an automated test suite in the tests/ directory.",
                                 "Frequently asked questions about it are answered here."]  # the commands left out
    xz = list(parse_qa(XZ_STYLE, "xz-utils/faq"))
    assert xz == [{"chapter": "xz-utils/faq", "question": "What do the letters XZ mean?",
                   "answer": ["Nothing.", "They are just two letters, which come from the file format suffix .xz."]}]
    python = list(parse_rst(RST_STYLE, "python3.11-doc/programming"))
    assert [e["question"] for e in python] == ["How do I iterate over a sequence in reverse order?",
                                               "Why is it called Python?"]
    assert python[0]["answer"] == ["Use the `reversed` built-in function:", "This won't touch your original sequence."]


POD_STYLE = """=head1 NAME

perlfaq4 - Data Manipulation

=head1 DESCRIPTION

This section of the FAQ answers questions related to manipulating numbers.

=head1 Data: Numbers

=head2 How do I round a number?
X<round> X<ceil>

(contributed by brian d foy)

Use C<sprintf()> or C<< printf >> with a format, and
see L<perlfunc/sprintf> for E<lt>digitsE<gt>.

    printf("%.3f", 3.1415926535);

=head2 Numbers with many digits

Not a question, so not an entry.

=head1 AUTHOR AND COPYRIGHT

Copyright notice.
"""

HTML_STYLE = """<ol><li value='1'><a href="#q1">How do I create an AUTOINCREMENT field?</a></li></ol>
<a name="q1"></a>
<p><b>(1) How do I create an AUTOINCREMENT field?</b></p>
<blockquote><p>Short answer: A column declared <a href="x.html">INTEGER PRIMARY KEY</a> will
  autoincrement.</p>
<blockquote><pre>
CREATE TABLE t1(a INTEGER PRIMARY KEY);
</pre></blockquote>
  <p>Keys are one greater than the largest key &amp; unique.</p></blockquote></li>
"""


def test_faq_files_in_pod_and_html_give_questions_with_their_answers_prose():
    from chat.evaluation.reader_training.faq import parse_html, parse_pod

    perl = list(parse_pod(POD_STYLE, "perl-doc/perlfaq4"))
    # The index entries (X<>) are not part of the question; a head without "?" is no question.
    assert [e["question"] for e in perl] == ["How do I round a number?"]
    assert perl[0]["chapter"] == "Data: Numbers"
    # The credit line and the code are left out; formatting codes read as text.
    assert perl[0]["answer"] == ["Use `sprintf()` or `printf` with a format, and see perlfunc for <digits>."]
    sqlite = list(parse_html(HTML_STYLE, "sqlite3-doc/faq"))
    assert [e["question"] for e in sqlite] == ["How do I create an AUTOINCREMENT field?"]  # not the contents list
    assert sqlite[0]["answer"] == ["Short answer: A column declared INTEGER PRIMARY KEY will autoincrement.",
                                   "Keys are one greater than the largest key & unique."]


MARKDOWN_STYLE = """# demo

[![build](https://img.shields.io/badge/build-passing-green.svg)](https://ci.example.org)

A library for demos.

## Usage

```sh
# not a heading: a comment in a shell block
npm install demo
```

## FAQ

### How do I change the timeout?

Pass the `timeout` option in **milliseconds**; see [the options](#options).

```js
demo({ timeout: 500 })
```

- The default is thirty seconds.
- [Options](#options)

#### Does it retry on its own?

Only when [`retry`][retry] is set to a number.

| option | default |
|--------|---------|
| retry  | 0       |

### What does `demo()` return?

```js
const result = demo()
```

## Browsers

**Can I use it in a browser?**

Yes, through any bundler that reads ES modules. [Read more](https://example.org/bundlers).

### Why?

Because.

### Which build should I use in a page?

- The browser build, for a script tag.
- The module build, for bundlers.

## Is there a command line version?

Yes.

The `demo-cli` package wraps it.

[retry]: https://example.org/retry
"""


def test_markdown_question_headings_give_questions_with_their_answers_prose():
    from chat.evaluation.reader_training.faq_markdown import parse_markdown_questions

    entries = list(parse_markdown_questions(MARKDOWN_STYLE, "demo/README.md"))
    # "Usage", "FAQ" and "Browsers" are no questions, "Why?" is too short, "What does `demo()`
    # return?" has only code under it and "Which build ...?" a list whose first item alone answers
    # nothing; the shell comment is no heading.
    assert [(e["chapter"], e["question"]) for e in entries] == [
        ("FAQ", "How do I change the timeout?"),
        ("How do I change the timeout?", "Does it retry on its own?"),
        ("Browsers", "Can I use it in a browser?"),
        ("demo", "Is there a command line version?"),
    ]
    # The answer runs on through the deeper heading's prose; code, the link-only item and the table
    # are left out; links read as their words, emphasis without its marks, code in backticks.
    assert entries[0]["answer"] == ["Pass the `timeout` option in milliseconds; see the options.",
                                    "The default is thirty seconds.", "Only when `retry` is set to a number."]
    assert entries[1]["answer"] == ["Only when `retry` is set to a number."]
    assert entries[2]["answer"] == ["Yes, through any bundler that reads ES modules."]  # not "Read more."
    assert entries[3]["answer"] == ["Yes.", "The `demo-cli` package wraps it."]  # "Yes." kept for the next one


def test_npm_packages_are_kept_under_permissive_licences_and_held_out_sources_are_not():
    from chat.evaluation.reader_training.faq_npm import PACKAGES, held_out, licence

    assert licence({"license": "MIT"}) == "MIT"
    assert licence({"license": "(MIT OR GPL-3.0)"}) == "(MIT OR GPL-3.0)"
    assert licence({"license": "MIT AND GPL-3.0"}) is None
    assert licence({"license": "GPL-3.0-or-later"}) is None
    assert licence({"licenses": [{"type": "BSD-3-Clause"}]}) == "BSD-3-Clause"
    assert licence({}) is None
    assert all(held_out(name) for name in ("pino", "pino-pretty", "@pinojs/redact", "commander", "ninja"))
    assert not any(held_out(name) for name in ("express", "bcrypt", "timeago.js"))
    assert not any(held_out(name) for name in PACKAGES)


def test_faq_pages_with_few_questions_are_gathered_by_package():
    def entry(source, page, n):
        return {"source": source, "page": page, "chapter": page, "question": f"Why {n}?", "answer": [f"Because {n}."]}

    entries = ([entry("python3.11-doc", "faq/general", n) for n in range(3)]
               + [entry("express", "express/Readme.md", 1), entry("express", "express/docs/faq.md", 2),
                  entry("koa", "koa/Readme.md", 3)])
    groups = dict(faq_groups(entries))
    assert sorted(groups) == ["express/*", "faq/general", "koa/*"]
    assert [e["question"] for e in groups["express/*"]] == ["Why 1?", "Why 2?"]
    assert len(groups["faq/general"]) == 3 and len(groups["koa/*"]) == 1


def test_faq_pairs_take_the_first_sentence_as_the_answer_and_other_answers_as_negatives():
    from chat.evaluation.reader_training.build import faq_pairs

    page = "demo/faq"
    entries = [
        {"source": "demo", "page": page, "chapter": page, "question": "How long does the client wait?",
         "answer": ["Yes.", "It waits 30 seconds for the server.", "A timeout of None waits forever."]},
        {"source": "demo", "page": page, "chapter": page, "question": "Are redirects followed?",
         "answer": ["Up to five redirects are followed.", "The pool keeps the connection."]},
        {"source": "demo", "page": page, "chapter": page, "question": "Must a stream be closed?",
         "answer": ["Close a stream when done.", "A closed stream frees its server connection."]},
    ]
    pairs = faq_pairs(entries, _Words(), count=0)
    first = [p for p in pairs if p["g"] == "faq-demo/faq-0"]
    positives = [p["c"] for p in first if p["y"]]
    # "Yes." alone says nothing: read with the sentence after it.
    assert positives == ["demo Faq FAQ: Yes. It waits 30 seconds for the server."]
    negatives = [p["c"] for p in first if not p["y"]]
    assert negatives and not any("waits forever" in c for c in negatives)  # its own answer is never a negative
    gone = [p for p in pairs if p["g"] == "faq-demo/faq-0-gone"]
    assert gone and all(p["y"] == 0 and "30 seconds" not in p["c"] for p in gone)


def _toy_embed(words: dict[str, list[float]]):
    """Unit vectors: a known word's own; a text's, the mean of its known words' (so a question that
    loses a word its answer holds moves away from that answer)."""
    import re

    import numpy as np

    def embed(texts):
        out = []
        for text in texts:
            found = [np.array(words[w], dtype=float) for w in re.findall(r"[a-z]+", text.lower()) if w in words]
            vector = np.mean(found, axis=0) if found else np.ones(len(next(iter(words.values()))))
            out.append(vector / np.linalg.norm(vector))
        return np.array(out)

    return embed


def test_a_swapped_question_asks_for_a_related_detail_no_candidate_holds(monkeypatch):
    from chat.evaluation.reader_training import swaps

    monkeypatch.setattr(swaps, "COMMON", 0)
    monkeypatch.setattr(swaps, "MIN_COUNT", 1)
    # "opened" is related to "closed" (cosine 0.4); "shut" is its synonym (0.9); "buffers" unrelated.
    embed = _toy_embed({"closed": [1, 0, 0, 0], "opened": [0.4, 0.9165, 0, 0], "shut": [0.9, 0.4359, 0, 0],
                        "connection": [0, 0, 1, 0], "buffers": [0, 0, 0, 1], "timeout": [0, 0.2, 0.9, 0.3]})
    question = "What happens when the connection is closed?"
    answer = "Connection: when the connection is closed, buffers are flushed."
    group = [{"q": question, "c": answer, "y": 1, "g": "gen-a"},
             {"q": question, "c": "Connection: the timeout is the wait for a reply.", "y": 0, "g": "gen-a"},
             # shown opened connections elsewhere, so "opened" is in the vocabulary
             {"q": "Is the connection opened lazily?", "c": "Pool: connections are opened lazily.", "y": 1, "g": "x"}]
    made = [p for p in swaps.swapped_pairs(group, embed) if p["g"] == "gen-a-swap"]
    assert [p["q"] for p in made] == ["What happens when the connection is opened?"] * 2
    assert [p["y"] for p in made] == [0, 0]
    assert {p["c"] for p in made} == {group[0]["c"], group[1]["c"]}


def test_no_swap_where_only_a_synonym_or_an_identifier_part_is_near(monkeypatch):
    from chat.evaluation.reader_training import swaps

    monkeypatch.setattr(swaps, "COMMON", 0)
    monkeypatch.setattr(swaps, "MIN_COUNT", 1)
    embed = _toy_embed({"closed": [1, 0, 0], "sealed": [0.9, 0.4359, 0], "prompt": [0, 1, 0], "idle": [0, 0, 1]})
    # "sealed" is too close to be another detail; "prompt" inside an identifier is not a word of the question.
    question = "Is default_prompt_name closed?"
    pairs = [{"q": question, "c": "default_prompt_name: closed when idle.", "y": 1, "g": "gen-b"},
             {"q": question, "c": "idle: a prompt waits.", "y": 0, "g": "gen-b"},
             {"q": "Is the door sealed?", "c": "The door is sealed.", "y": 1, "g": "other"}]
    assert [p for p in swaps.swapped_pairs(pairs, embed) if p["g"] == "gen-b-swap"] == []


def test_every_schema_makes_tables_and_row_questions_about_its_keys():
    for schema in SCHEMAS:
        questions = table_questions(schema, random.Random(5), 30)
        answered = [q for q in questions if q.answer >= 0]
        assert answered, schema.title
        for q in answered:
            row = dict(cell.split(": ", 1) for cell in q.rows[q.answer].split("; "))
            assert list(row) == list(schema.columns)
            assert row[schema.key].lower() in q.text.lower()
