"""Markdown inline markup: reference links written inline at parsing, and the text an answer quotes
(links within the author's site, badges and inline HTML as text) and a heading shows."""

from corpus.ingest.parse import parse_document
from corpus.ingest.parse.markdown_inline import inline_references, plain, readable

GUIDE = """\
# Transports

Transports can operate inside a [Worker Thread][worker-thread] using the [Structured Clone Algorithm][sca].
See the [API docs for `pino.transport`][pino-transport] and [Unknown][nowhere]. The [pino-pretty][] module
and [Kibana] too; [1] stays a citation.

```js
const link = "[Worker Thread][worker-thread]"
```

[worker-thread]: https://nodejs.org/api/worker_threads.html
[sca]: <https://developer.mozilla.org/clone> "Structured clone"
[pino-transport]: /docs/api.md#pino-transport
[pino-pretty]: https://github.com/pinojs/pino-pretty
[kibana]: https://www.elastic.co/kibana
[1]: https://example.com/one
"""


def test_reference_links_defined_in_the_document_are_written_inline_and_code_is_left_alone():
    text = inline_references(GUIDE)

    assert "inside a [Worker Thread](https://nodejs.org/api/worker_threads.html) using the " \
           "[Structured Clone Algorithm](https://developer.mozilla.org/clone)." in text
    assert "[API docs for `pino.transport`](/docs/api.md#pino-transport) and [Unknown][nowhere]." in text
    assert "The [pino-pretty](https://github.com/pinojs/pino-pretty) module\nand " \
           "[Kibana](https://www.elastic.co/kibana) too; [1] stays a citation." in text
    assert 'const link = "[Worker Thread][worker-thread]"' in text  # code
    assert "[worker-thread]: https://nodejs.org/api/worker_threads.html" in text  # the definitions stay
    assert inline_references("No links [here].") == "No links [here]."


def test_an_answer_reads_links_within_the_site_as_their_text_and_keeps_links_elsewhere():
    assert readable("These are now referred to as [Legacy Transports](#legacy-transports).") == (
        "These are now referred to as Legacy Transports.")
    assert readable("Inside a [Worker Thread](https://nodejs.org/api/worker_threads.html) and [docs](/docs/api.md)."
                    ) == "Inside a [Worker Thread](https://nodejs.org/api/worker_threads.html) and docs."
    assert readable("Inside a [Worker Thread][worker-thread], unresolved.") == "Inside a Worker Thread, unresolved."
    assert readable("- [`logger.flush([cb])`](/docs/api.md#flush) — there is no write buffer.") == (
        "- `logger.flush([cb])` — there is no write buffer.")
    badges = ("[![NPM Version](https://img.shields.io/npm/v/commander.svg)](https://npmjs.org/package/commander) "
              "[![Build](https://github.com/tj/commander.js/badge.svg)](https://github.com/tj/commander.js) "
              "The complete solution for node.js command-line interfaces.")
    assert readable(badges) == "The complete solution for node.js command-line interfaces."
    assert readable('<a id="writing"></a>') == ""
    assert readable('Pino <img src="logo.png" alt="logo"> logs,<br>fast.') == "Pino logs, fast."
    assert readable("Write `[text](#not-a-link)` in code.") == "Write `[text](#not-a-link)` in code."
    assert readable("A <file> stays as written.") == "A <file> stays as written."
    # A destination with balanced parentheses is one link, not a link and a stray ")".
    assert readable("See [more](javascript:alert(2)).") == "See more."
    assert readable("[Foo](https://en.wikipedia.org/wiki/Foo_(bar)) is kept.") == (
        "[Foo](https://en.wikipedia.org/wiki/Foo_(bar)) is kept.")


def test_a_heading_reads_without_markup():
    assert plain("`asObject` (Boolean)") == "asObject (Boolean)"
    assert plain("Declaring _program_ variable") == "Declaring program variable"
    assert plain("**Bold** and *italic* [link](#x)") == "Bold and italic link"
    assert plain("max_line_length and `__init__`") == "max_line_length and __init__"


def test_a_markdown_document_is_parsed_with_inline_links_and_plain_headings():
    source = ("# Options\n\n## `asObject` (Boolean)\n\nUse a [Worker Thread][wt].\n\n"
              "Declaring _program_ variable\n-----------------------------\n\nText.\n\n[wt]: https://nodejs.org/wt\n")
    document = parse_document(source.encode(), filename="options.md")

    assert "Use a [Worker Thread](https://nodejs.org/wt)." in document.text
    assert [(h.level, h.title) for h in document.headings] == [
        (1, "Options"), (2, "asObject (Boolean)"), (2, "Declaring program variable")]
    assert [document.text[h.start:].split("\n", 1)[0] for h in document.headings] == [
        "# Options", "## `asObject` (Boolean)", "Declaring _program_ variable"]
