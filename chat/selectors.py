"""Reads for the chat page: the conversations listed in the sidebar, found by title or content."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from chat.models import Conversation

LIST_LIMIT = 100
SNIPPET_CONTEXT = 40  # characters shown on each side of a match
QUERY_MAX_CHARS = 200


@dataclass(frozen=True)
class ListedConversation:
    pk: int
    label: str
    snippet: SafeString | None = None  # where the search text was found in a message, marked


def listed_conversations(user, *, query: str = "", others: bool = False,
                         limit: int = LIST_LIMIT) -> list[ListedConversation]:
    """The user's conversations, most recently active first: those of the chat page, or with
    `others` those asked through the API or the command line. With `query`, only those whose
    title or messages contain it (case-insensitive), each with a snippet of the first message
    that does."""
    conversations = Conversation.objects.others_of(user) if others else Conversation.objects.chats_of(user)
    query = " ".join(query.split())[:QUERY_MAX_CHARS]
    if query:
        conversations = conversations.matching(query)
    rows = conversations.only("pk", "title", "updated_at")[:limit]
    return [ListedConversation(pk=c.pk, label=str(c),
                               snippet=snippet(c.match, query) if query and c.match else None)
            for c in rows]


def snippet(text: str, query: str, *, context: int = SNIPPET_CONTEXT) -> SafeString:
    """A short, escaped excerpt of `text` around the first occurrence of `query`, which is wrapped
    in <mark>; the start of `text` if it does not occur."""
    flat = " ".join(text.split())
    at = flat.lower().find(query.lower())
    if at < 0:
        return mark_safe(escape(flat[: 2 * context]))  # noqa: S308 — escaped
    start, end = max(0, at - context), min(len(flat), at + len(query) + context)
    before, found, after = flat[start:at], flat[at:at + len(query)], flat[at + len(query):end]
    return mark_safe(  # noqa: S308 — every piece is escaped
        f"{'…' if start else ''}{escape(before)}<mark>{escape(found)}</mark>{escape(after)}"
        f"{'…' if end < len(flat) else ''}")
