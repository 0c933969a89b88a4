"""The answer as Markdown for clients that render it themselves (/v1): what the chat page shows,
without anything that could run or load when rendered. The chat page renders an answer through
chat.markdown (nh3 on the HTML); a /v1 client gets Markdown text and renders it with whatever it
has, so here the text itself is made inert:

- raw HTML: script-like elements (chat.markdown.DROPPED_WITH_CONTENT) go with their content,
  other tags of HTML elements and comments are unwrapped (their text stays), as on the chat page;
  any "<" left that could still open a tag, an autolink or an HTML block is written as "&lt;",
  so text in angle brackets that is no HTML element ("<implementations-keywords>") is shown as
  written, as on the chat page (chat.markdown.HTML_ELEMENTS);
- links whose scheme is not one of chat.markdown.URL_SCHEMES (javascript:, data:, ...) stop
  being links ("](" becomes "] ("); images become plain text (the chat shows none: a URL loaded
  on sight can leak data); link reference definitions become text ("]:" is written "]\\:").

Fenced code blocks stay as they are, and only those that every CommonMark renderer sees as code:
opened at the start of a line, closed by the matching fence. Anything else is treated as text, so
a renderer can never see live HTML where this module saw code; an inline `code` span is kept only
when it would be harmless as text too (bare tags such as `<div>`, no link).
Removing markup can join pieces into new markup, so the cleaning runs until nothing changes."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator

from chat.markdown import DROPPED_WITH_CONTENT, HTML_ELEMENTS, URL_SCHEMES

_DROPPED = re.compile(r"<(" + "|".join(sorted(DROPPED_WITH_CONTENT)) + r")\b.*?(?:</\1\s*>|\Z)",
                      re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)(?:\s[^<>]*)?/?>|<![A-Za-z][^<>]*>|<\?.*?(?:\?>|\Z)", re.DOTALL)
_OPENER = re.compile(r"<(?=[A-Za-z/!?])")
_DEFINITION = re.compile(r"\]:")
# "![" opens an image unless it is a citation such as ![1] (with no definitions left, "![1]" can
# only be an image when "(" or "[" follows).
_IMAGE = re.compile(r"!\[(?!\d+(?:\s*,\s*\d+)*\](?![(\[]))")
_LINK_TARGET = re.compile(r"\]\(\s*(<[^>\n]*>|[^\s)]*)")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_BLANK = re.compile(r"[\x00-\x20\x7f]+")
_FENCE_OPEN = re.compile(r"(`{3,})[^`\n]*$|(~{3,}).*$")
_INLINE_CODE = re.compile(r"(`[^`\n]+`)")
_BARE_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)\s*/?>")
# Bare tags that change how the text after them is read (as script, style, raw text or markup of
# another language): never kept, even in `code`.
_UNSAFE_BARE = DROPPED_WITH_CONTENT | {"plaintext", "xmp", "title", "svg", "math", "base", "meta", "link", "frame",
                                       "frameset"}
# Every cleaning step starts at one of these: text before the first of them is never changed.
_MARKUP_START = re.compile(r"[<\[\]`~]")
_MAX_PASSES = 10


def client_markdown(text: str) -> str:
    """`text` (Markdown, as stored for the chat) made inert for a client's renderer (see above)."""
    for _ in range(_MAX_PASSES):
        cleaned = _clean_once(text)
        if cleaned == text:
            return text
        text = cleaned
    return _clean_text(text).replace("<", "&lt;")  # never reached in practice: no exemptions at all


def client_markdown_stream(pieces: Iterable[str]) -> Iterator[str]:
    """client_markdown over a stream of pieces, still token by token where it can be: text before
    the first character that markup starts with (< [ ] ` ~) cannot change when cleaned, so it goes
    out as it comes; from there on a paragraph waits until it is complete (markup never spans a
    blank line; a fenced block goes out whole), or the stream ends."""
    pending, sent = "", 0  # the text not yet cleaned, and how much of it already went out as is
    for piece in pieces:
        pending += piece
        cut = _safe_cut(pending)
        if cut:
            if sent >= cut:  # all of it was plain text, already sent
                sent -= cut
            else:
                yield client_markdown(pending[:cut])[sent:]
                sent = 0
            pending = pending[cut:]
        plain = _MARKUP_START.search(pending)
        plain_end = plain.start() if plain else len(pending)
        if plain_end > sent:
            yield pending[sent:plain_end]
            sent = plain_end
    rest = client_markdown(pending)[sent:] if len(pending) > sent else ""
    if rest:
        yield rest


def _safe_cut(text: str) -> int:
    """The end of the last blank line of `text` outside fenced blocks and before a fence still
    open (its closing line may yet come): what can go out now (0: nothing)."""
    cut = 0
    for start, end, is_code in _blocks(text):
        if is_code:
            continue
        open_fence, offset = None, start
        for line in text[start:end].splitlines(keepends=True):
            if _FENCE_OPEN.match(line.rstrip("\n")):
                open_fence = offset
                break
            offset += len(line)
        found = text.rfind("\n\n", start, end if open_fence is None else open_fence)
        if found != -1:
            cut = found + 2
        if open_fence is not None:
            break
    return cut


def _blocks(text: str) -> list[tuple[int, int, bool]]:
    """`text` as (start, end, is_fenced_code) pieces. A fence opens at the very start of a line
    (three or more backticks with no backtick after them, or tildes) and closes at a line of up to
    three spaces, at least as many of the same character and nothing else; one left open is not
    code (a renderer shows it as code to the end: cleaned text shown as code is harmless)."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    pieces: list[tuple[int, int, bool]] = []
    prose_start = index = 0
    while index < len(lines):
        opening = _FENCE_OPEN.match(lines[index].rstrip("\n"))
        closing_at = None
        if opening:
            fence = opening.group(1) or opening.group(2)
            closing = re.compile(r" {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*\n?\Z")
            closing_at = next((j for j in range(index + 1, len(lines)) if closing.match(lines[j])), None)
        if closing_at is None:
            index += 1
            continue
        if prose_start < offsets[index]:
            pieces.append((prose_start, offsets[index], False))
        pieces.append((offsets[index], offsets[closing_at + 1], True))
        prose_start = offsets[closing_at + 1]
        index = closing_at + 1
    if prose_start < len(text):
        pieces.append((prose_start, len(text), False))
    return pieces


def _clean_once(text: str) -> str:
    return "".join(text[start:end] if is_code else _clean_prose(text[start:end])
                   for start, end, is_code in _blocks(text))


def _clean_prose(text: str) -> str:
    """Clean text outside fenced blocks; an inline `code` span is kept as it is when it would be
    harmless even as text (see _harmless_code), so `<form>` reads as the chat shows it."""
    parts = _INLINE_CODE.split(text)
    return "".join(part if odd and _harmless_code(part) else _clean_text(part)
                   for odd, part in ((i % 2 == 1, p) for i, p in enumerate(parts)))


def _harmless_code(span: str) -> bool:
    """Whether the code span `span` stays inert even if a renderer does not take it for code: its
    only markup is bare tags (no attributes, nothing that changes how what follows is parsed),
    and it has no link or image."""
    if "](" in span or "![" in span or "]:" in span:
        return False
    for match in _OPENER.finditer(span):
        tag = _BARE_TAG.match(span, match.start())
        if tag is None or tag.group(1).lower() in _UNSAFE_BARE:
            return False
    return True


def _clean_text(text: str) -> str:
    text = _DROPPED.sub("", text)
    text = _COMMENT.sub("", text)
    text = _TAG.sub(_unwrapped, text)
    text = _OPENER.sub("&lt;", text)
    text = _DEFINITION.sub(r"]\\:", text)  # "[x]: url" would define a link target anywhere, even in a quote
    text = _IMAGE.sub(r"!\\[", text)
    return _LINK_TARGET.sub(_link, text)


def _unwrapped(match: re.Match) -> str:
    """A tag of an HTML element, a declaration or a processing instruction goes; a tag of any
    other name is text in angle brackets and stays (its "<" is escaped next)."""
    name = match.group(1)
    return match.group(0) if name is not None and name.lower() not in HTML_ELEMENTS else ""


def _link(match: re.Match) -> str:
    """Keep a link whose target is relative or has an allowed scheme; break the others."""
    target = match.group(1).strip("<>")
    # What a browser would make of it: entities decoded, backslash escapes, spaces and controls gone.
    plain = _BLANK.sub("", re.sub(r"\\(?=[!-/:-@\[-`{-~])", "", html.unescape(target))).lstrip("<")
    scheme = _SCHEME.match(plain)
    if scheme is None or scheme.group(1).lower() in URL_SCHEMES:
        return match.group(0)
    return "] (" + match.group(0)[2:]
