"""Questions people wrote in Markdown: a README's question headings ("## How do I ...?", "### Why
does X ...?"), its bold questions alone on a line ("**Can I ...?**", "**Q: ...?**") and the summaries
of its <details> ("<summary>Is ...?</summary>"), each with the prose under it as the answer. Pure.

An answer is the text under its heading up to the next heading of the same or a higher level (a
bold question or a summary: up to the next heading or question of any kind); its sub-headings'
prose is part of it. Code (fenced and indented), tables, HTML blocks, badges, link definitions,
thematic breaks and list items that are only a link or a label are left out; paragraphs and list
items are split into sentences (chat.answering.text.split_sentences) with Markdown inline markup as
plain text (links as their words, emphasis without its marks, code spans kept in backticks as
faq.py keeps reST's literals).

A heading is a question when its words end with "?" (its only one: "Any Questions ? Report a Bug
?" is a contact line) and there are at least QUESTION_WORDS of them outside code, the first a word
("### `get(key, fallback?)`", an API signature, is none; nor is "Why?") and the heading or one of
its clauses starts as a question does (How, Why, Can, Does ...: "Upgrading from 1.x?" and "Want to
ride the bleeding edge?" are calls to read on); it is answered when a sentence of the answer has at
least PROSE_WORDS words (a "Yes." alone, a label or a bare command is no answer).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

from chat.answering.text import split_sentences
from corpus.ingest.parse.markdown_inline import inline_references, plain

QUESTION_WORDS = 4
PROSE_WORDS = 4  # faq.MIN_WORDS: a shorter sentence says nothing alone
# A bold question or a <summary> sits under the section it is in: deeper than any heading.
PSEUDO_LEVEL = 7

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_HTML_HEADING = re.compile(r"\s*<h([1-6])\b[^>]*>(.*?)</h\1>\s*", re.IGNORECASE)
_BOLD_QUESTION = re.compile(r"\s*(?:[-*+]\s+)?(\*\*|__)(.+?\?)\s*\1\s*")
_SUMMARY = re.compile(r"\s*(?:<details>\s*)?<summary>(.*?)</summary>\s*", re.IGNORECASE)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_ITEM = re.compile(r"( *)(?:[-*+]|\d{1,3}[.)])(?:[ \t]+|$)")
_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_DEFINITION = re.compile(r" {0,3}\[[^\]]+\]:\s*\S+.*")
_TABLE = re.compile(r"\s*\|.*|\s*:?-{3,}:?\s*\|.*")
_QUOTE = re.compile(r" {0,3}>[ ]?")
_ALERT = re.compile(r"\s*\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s*", re.IGNORECASE)
_NUMBERING = re.compile(r"^(?:Q\s*\d*\s*[:.)]|FAQ\s*:|\d+(?:\.\d+)*[.)]?)\s+", re.IGNORECASE)
# A question's first word (of the heading or of a clause: "I disagree with rule X, can you change it?").
_ASKS = re.compile(r"(how|what|what's|whats|why|when|where|which|who|whom|whose|can|could|should|would|will|does|do|"
                   r"did|is|are|was|were|may|might|must|shall|has|have|had|am|(is|are|can|do|does|did|won|should|"
                   r"would|could|was|has|have)n['’]t)\b", re.IGNORECASE)
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
_HELD = re.compile("\x01(\\d+)\x01")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
# "See my answer here.", "Read more.": a link's words, which answer nothing once the link is gone.
_POINTER = re.compile(r"(see|read|check|refer|more)\b\W*(\w+\W+){0,4}$", re.IGNORECASE)
_URL = re.compile(r"<?\bhttps?://[^\s<>]+>?")  # a bare address is no prose
_SHORTCODE = re.compile(r"(?<!\w):[a-z0-9_+-]+:(?!\w)")  # GitHub's emoji (":warning:")


def _plain(text: str) -> str:
    """Inline Markdown as text: markdown_inline.plain(), code spans kept in backticks; HTML tags,
    emoji short codes and bare addresses dropped, entities as their characters."""
    spans: list[str] = []

    def hold(match: re.Match) -> str:
        spans.append("`" + match.group(0).strip("`").strip() + "`")
        return f"\x01{len(spans) - 1}\x01"

    text = plain(_CODE_SPAN.sub(hold, text))
    text = html.unescape(_URL.sub("", _SHORTCODE.sub("", _TAG.sub("", text))))
    return " ".join(_HELD.sub(lambda m: spans[int(m.group(1))], text).split())


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z][\w'’-]*", text)


def _question(heading: str) -> str | None:
    """The heading as a question, or None (see the module docstring)."""
    text = _NUMBERING.sub("", _plain(heading)).strip()
    if not text.endswith("?") or text.count("?") > 1 or not re.match(r"[A-Za-z]", text):
        return None
    if len(_words(_CODE_SPAN.sub("", text))) < QUESTION_WORDS:
        return None
    clauses = re.split(r"[.,:;!]\s+|\s+[-–—]\s+", text)
    if not any(_ASKS.match(clause) for clause in clauses):
        return None  # "Using Next.js 13.5 or later?", "New to Foundation?": a call to read on, not a question
    return text


def _heading(lines: list[str], i: int, in_paragraph: bool) -> tuple[int, str, int] | None:
    """(level, title, lines it takes) if a heading or a question standing as one starts at line i."""
    line = lines[i]
    if match := _ATX.fullmatch(line):
        return len(match.group(1)), match.group(2) or "", 1
    if match := _HTML_HEADING.fullmatch(line):
        return int(match.group(1)), match.group(2), 1
    if match := _SUMMARY.fullmatch(line):
        return PSEUDO_LEVEL, match.group(1), 1
    if not in_paragraph and (match := _BOLD_QUESTION.fullmatch(line)):
        return PSEUDO_LEVEL, match.group(2), 1
    if (not in_paragraph and line.strip() and i + 1 < len(lines) and _SETEXT.fullmatch(lines[i + 1])
            and not _ITEM.match(line) and not _TABLE.fullmatch(line) and not line.startswith((" " * 4, "\t"))):
        return (1 if lines[i + 1].strip()[0] == "=" else 2), line.strip(), 2
    return None


def _structure(text: str) -> list[tuple[int, str] | str]:
    """The document's lines: a heading as (level, title), any other line as itself; fenced code
    as empty lines (a "# comment" in a shell block is no heading), HTML comments gone."""
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text.replace("\r\n", "\n"))
    lines = inline_references(text).split("\n")
    out: list[tuple[int, str] | str] = []
    fence, i = None, 0
    while i < len(lines):
        line = lines[i]
        if fence is not None:
            match = _FENCE.fullmatch(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            out.append("")
            i += 1
            continue
        if (match := _FENCE.fullmatch(line)) and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            out.append("")
            i += 1
            continue
        in_paragraph = bool(out) and isinstance(out[-1], str) and bool(out[-1].strip())
        if heading := _heading(lines, i, in_paragraph):
            level, title, taken = heading
            out.append((level, title))
            out += [""] * (taken - 1)
            i += taken
            continue
        out.append(line)
        i += 1
    return out


def _paragraphs(lines: list[str]) -> Iterator[tuple[str, bool]]:
    """The answer's prose, a paragraph or a list item at a time, as plain text; with whether it is
    a list item."""
    current: list[str] = []
    in_item = False
    for raw in lines + [""]:
        line = raw.expandtabs(4)
        while _QUOTE.match(line):  # a quotation's prose is prose; its "> [!NOTE]" marker is not
            line = _QUOTE.sub("", line, count=1)
        line = _ALERT.sub("", line)
        item = _ITEM.match(line)
        if not line.strip() or item or _BREAK.fullmatch(line) or _DEFINITION.fullmatch(line) or _TABLE.fullmatch(line):
            if current:
                yield _plain(" ".join(current)), in_item
            current = [line[item.end():]] if item and line[item.end():].strip() else []
            in_item = bool(current)
            continue
        if not current and line.startswith(" " * 4):
            continue  # indented code: four spaces where no paragraph or item goes on
        if line.lstrip().startswith("<") and not line.lstrip().startswith(("<http", "<mailto")):
            if current:
                yield _plain(" ".join(current)), in_item
            current = []
            continue  # an HTML block: badges, images, <details>, <table>
        current.append(line.strip())


def _sentences(lines: list[str]) -> list[str]:
    """The answer's sentences, short pointers to a link left out; none when it starts with a list
    (its first item alone answers nothing: "- For direct use via `<script>`" under "Which dist file
    to use?")."""
    sentences: list[str] = []
    for paragraph, is_item in _paragraphs(lines):
        if len(_words(_CODE_SPAN.sub("", paragraph))) < 3 and not re.search(r"\w[.!?]$", paragraph):
            continue  # a link alone, a label ("Example:"), a bare command; not "Yes."
        if is_item and not sentences:
            return []
        sentences += [s for s in split_sentences(paragraph) if not _POINTER.match(s)]
    return sentences


def parse_markdown_questions(text: str, page: str) -> Iterator[dict]:
    """The question headings of a Markdown document (see the module docstring) as faq.py's entries:
    {"chapter": the parent heading's text (`page` at the top), "question", "answer": its sentences}."""
    lines = _structure(text)
    headings = [(i, line) for i, line in enumerate(lines) if isinstance(line, tuple)]
    for n, (i, (level, title)) in enumerate(headings):
        question = _question(title)
        if question is None:
            continue
        end = next((j for j, (lv, _) in headings[n + 1:] if lv <= level or level == PSEUDO_LEVEL), len(lines))
        parent = next((t for _, (lv, t) in reversed(headings[:n]) if lv < level), "")
        chapter = _plain(parent) or page
        answer = [line for line in lines[i + 1:end] if isinstance(line, str)]
        sentences = _sentences(answer)
        if any(len(_words(sentence)) >= PROSE_WORDS for sentence in sentences):
            yield {"chapter": chapter, "question": question, "answer": sentences}
