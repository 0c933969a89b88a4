"""Conversations through the answer pipeline: the turns asked in order, each answer going into the
history of the next, as the chat page does; every turn with a source is scored like an item.

Rows are grouped by the turn's kind ("first", "follow-up", "new-topic"). A scored follow-up is
also asked alone in its standalone phrasing (row kind "follow-up (standalone)"): the figure the
follow-up should reach when the conversation's subject is carried over well.
"""

from __future__ import annotations

from chat.evaluation.answer_sets import Conversation
from chat.evaluation.answers import run_question

STANDALONE = "follow-up (standalone)"


def run_conversation(conversation: Conversation, collections) -> list[dict]:
    """The scored rows of one conversation: its scored turns, then the standalone questions."""
    history: list[tuple[str, str]] = []
    rows, standalone = [], []
    for number, turn in enumerate(conversation.turns, start=1):
        row = run_question(turn.question, collections, history=history, source=turn.source,
                           evidence=turn.evidence, page=turn.page)
        history += [("user", turn.question)] + ([("assistant", row["text"])] if row["text"] else [])
        if turn.source is None:
            continue
        ident = f"{conversation.id}#{number}"
        rows.append({"id": ident, "kind": turn.kind, **row})
        if turn.kind == "follow-up" and turn.standalone:
            standalone.append({"id": ident, "kind": STANDALONE,
                               **run_question(turn.standalone, collections, source=turn.source,
                                              evidence=turn.evidence, page=turn.page)})
    return rows + standalone
