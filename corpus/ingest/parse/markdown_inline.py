"""Markdown inline markup: reference links made inline at parsing, and text a reader reads. Pure.

A reference link (`[Worker Thread][worker-thread]`, `[pino-pretty][]`, `[pino-pretty]`) names a
definition (`[worker-thread]: https://...`) written anywhere in the file, often far from the
sentence: quoted alone, the sentence shows the brackets and no link. inline_references() makes each
one whose definition is in the document an inline link (`[Worker Thread](https://...)`), which
renders the same, when the document is parsed; code (fenced blocks, code spans) is left as written.

readable() is what an answer quotes: an inline link to an absolute http(s) or mailto URL stays a
link, any other link (an in-page `#anchor`, a path relative to the author's repository) becomes its
text, a reference link left unresolved its text, images (badges) and raw inline HTML tags (`<a
id="..."></a>` anchors, `<img>`, `<br>`) go. plain() is a heading as a title reads: that, without
code backticks or emphasis marks (`asObject` (Boolean) -> asObject (Boolean); Declaring _program_
variable -> Declaring program variable; snake_case and __dunder__ names stay whole).
"""

from __future__ import annotations

import re
from collections.abc import Callable

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_DEFINITION = re.compile(r"^ {0,3}\[([^\]\n]+)\]:[ \t]*<?([^\s>]+)>?(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?"
                         r"[ \t]*$", re.MULTILINE)
# Link text: no brackets but one level of nested ones ("[`logger.flush([cb])`]" holds a code span).
_TEXT = r"((?:[^\[\]\n]|\[[^\[\]\n]*\])*)"
_FULL_REFERENCE = re.compile(r"(!?)\[" + _TEXT + r"\]\[([^\[\]\n]*)\]")
_SHORTCUT = re.compile(r"(!?)(?<![\]\\])\[([^\[\]\n]+)\](?![\[(:])")
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")

_IMAGE = re.compile(r"!\[" + _TEXT + r"\](?:\([^)\n]*\)|\[[^\[\]\n]*\])")
# The destination may hold one level of balanced parentheses, as CommonMark allows ("f(2)").
_DESTINATION = r"<?((?:[^\s()<>]|\([^\s()<>]*\))*)>?"
_INLINE_LINK = re.compile(r"\[" + _TEXT + r"\]\(\s*" + _DESTINATION
                          + r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?\s*\)")
_REFERENCE_LINK = re.compile(r"\[" + _TEXT + r"\]\[[^\[\]\n]*\]")
_ABSOLUTE = re.compile(r"(?:https?://|mailto:)\S", re.IGNORECASE)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_HTML_TAG = re.compile(r"</?(?:a|img|span|sup|sub|small|picture|source|u|ins|mark|p|div|details|summary|b|i|em|strong)"
                       r"(?:\s[^<>]*)?/?>", re.IGNORECASE)
_SPACES = re.compile(r"[ \t]{2,}")
_EMPHASIS = re.compile(r"(?<![\w*\\])(\*{1,3}|_{1,3})(?=[^\s*_])(.+?)(?<=[^\s*_\\])\1(?![\w*])")


def _label(name: str) -> str:
    return " ".join(name.split()).casefold()


def inline_references(text: str) -> str:
    """`text` (Markdown) with every reference link and image whose definition it holds written
    inline; the rest, definitions included, unchanged."""
    if "]" not in text:
        return text
    definitions: dict[str, str] = {}
    for match in _DEFINITION.finditer(text):
        definitions.setdefault(_label(match.group(1)), match.group(2))
    if not definitions:
        return text

    def full(match: re.Match) -> str:
        bang, words, name = match.group(1), match.group(2), match.group(3)
        url = definitions.get(_label(name or words))
        return match.group(0) if url is None else f"{bang}[{words}]({url})"

    def shortcut(match: re.Match) -> str:
        bang, words = match.group(1), match.group(2)
        url = definitions.get(_label(words))
        # "[1]" stays: answers cite their sources so.
        return match.group(0) if url is None or words.strip().isdigit() else f"{bang}[{words}]({url})"

    def change(line: str) -> str:
        if "]" not in line or _DEFINITION.fullmatch(line):
            return line
        return _code_safe(line, lambda held: _SHORTCUT.sub(shortcut, _FULL_REFERENCE.sub(full, held)))

    return _outside_fences(text, change)


def readable(text: str) -> str:
    """Markdown inline markup as an answer quotes it (see the module docstring)."""
    if not any(mark in text for mark in "[<!"):
        return text

    def link(match: re.Match) -> str:
        words, url = match.group(1), match.group(2)
        if not words.strip():
            return ""
        return f"[{words}]({url})" if _ABSOLUTE.match(url) else words

    def change(part: str) -> str:
        part = _IMAGE.sub("", part)
        part = _INLINE_LINK.sub(link, part)
        part = _REFERENCE_LINK.sub(lambda m: m.group(1), part)
        return _HTML_TAG.sub("", _BREAK.sub(" ", part))

    changed = _code_safe(text, change)
    return _SPACES.sub(" ", changed).strip() if changed != text else text


def plain(text: str) -> str:
    """A heading's words as a title reads: readable(), no links, code backticks or emphasis marks."""
    text = readable(text)
    text = _INLINE_LINK.sub(lambda m: m.group(1), text)
    spans: list[str] = []

    def hold(match: re.Match) -> str:
        spans.append(match.group(0).strip("`").strip())
        return f"\x00{len(spans) - 1}\x00"

    held = _CODE_SPAN.sub(hold, text)
    previous = None
    while previous != held:  # nested emphasis (***a***, **_a_**)
        previous, held = held, _EMPHASIS.sub(lambda m: m.group(2), held)
    return " ".join(_PLACEHOLDER.sub(lambda m: spans[int(m.group(1))], held).split())


def _code_safe(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to `text` with its code spans held out (they may sit inside link text)."""
    spans: list[str] = []

    def hold(match: re.Match) -> str:
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    if "\x00" in text:
        return change(text)  # no room for placeholders (parsed text holds no NUL; be safe anyway)
    held = _CODE_SPAN.sub(hold, text) if "`" in text else text
    changed = change(held)
    return _PLACEHOLDER.sub(lambda m: spans[int(m.group(1))], changed) if spans else changed


def _outside_fences(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to each line outside fenced code blocks (every change here is within a line)."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.fullmatch(line)
        if fence is None:
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                fence = match.group(1)
                out.append(line)
            else:
                out.append(change(line))
            continue
        out.append(line)
        if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) and not match.group(2).strip():
            fence = None
    return "\n".join(out)
