"""Conversations and answers as Markdown text: the export of a conversation and the text an
answer's Copy button puts on the clipboard. Which sources an answer lists is decided by the
caller (chat.views.sources_of); this module only writes them out."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from chat.answering.citations import chunk_range_label
from chat.models import Conversation, Message


def source_line(source: dict, *, link: str = "") -> str:
    """`[n] Title — source, page p, chunks a–b` (the title linked to `link` when given)."""
    document = source["document"]
    title = _inline(document.get("title") or document.get("source") or f"Document {document.get('id')}")
    if link:
        title = f"[{title}]({link})"
    where = [_code(document["source"])] if document.get("source") else []
    if source.get("page"):
        where.append(f"page {source['page']}")
    where.append(chunk_range_label(source["start"], source["end"]))
    return f"[{source['n']}] {title} — {', '.join(where)}"


def answer_markdown(message: Message, sources: Sequence[dict], *,
                    absolute: Callable[[str], str] | None = None) -> str:
    """The answer's text followed by its sources; an answer that failed says why.

    `sources` are the citations listed under the answer, each with a "url" (the passage view);
    `absolute` turns that path into a full address (left out when None)."""
    parts = []
    if message.content.strip():
        parts.append(message.content.strip())
    if message.status == Message.Status.NOT_FOUND:
        parts.append(f"*Not found: {message.error}*")
    elif message.error:
        parts.append(f"*No complete answer: {message.error}*")
    elif message.status == Message.Status.STOPPED:
        parts.append("*Stopped; the answer is partial.*")
    if sources:
        lines = ["Sources:", ""]
        for source in sources:
            link = absolute(source["url"]) if absolute and source.get("url") else ""
            lines.append(f"- {source_line(source, link=link)}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def conversation_markdown(conversation: Conversation, items: Iterable[tuple[Message, Sequence[dict]]], *,
                          absolute: Callable[[str], str] | None = None) -> str:
    """The whole conversation: a heading per question, each answer with its sources.

    `items` are the conversation's messages in order, each with the sources listed under it
    (empty for questions)."""
    out = [f"# {_one_line(str(conversation))}", ""]
    for message, sources in items:
        if message.role == Message.Role.USER:
            out += [f"## {_one_line(message.content)}", ""]
            if "\n" in message.content.strip():  # a long question keeps its full text under the heading
                out += [_quote(message.content), ""]
        else:
            out += [answer_markdown(message, sources, absolute=absolute), ""]
    return "\n".join(out).rstrip() + "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "(empty)"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.strip().splitlines())


# A document's title is its author's text: written as literal text, it must not open a code span
# (a backtick would pair with the one of the source after it), a link or emphasis, nor run raw HTML.
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>!&])")


def _inline(text: str) -> str:
    """`text` as literal Markdown inline text on one line: its punctuation backslash-escaped."""
    return _INLINE_SPECIAL.sub(r"\\\1", _one_line(text))


def _code(text: str) -> str:
    """`text` as one Markdown code span, whatever backticks it holds: the fence is one backtick more
    than its longest run (backslashes do not escape inside a code span), padded with a space when it
    starts or ends with a backtick or a space (CommonMark strips one from each side)."""
    text = _one_line(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text[:1] in "` " or text[-1:] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"
