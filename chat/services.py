"""Writes of the chat: start conversations, ask a question and record the answer as it streams.

message_ask() is a generator shared by the web page, the API and the command: it stores the
question and an assistant message at once, then updates that message as the answer comes, so a
partial answer survives a stop, a dropped connection or an LLM failure.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet

from chat.answering.pipeline import (
    AnswerError,
    LLMFailed,
    NotFound,
    complete_answer,
    finish,
    prepare,
    stream_answer,
)
from chat.errors import log_failure, server_failure_message
from chat.models import Conversation, Message
from chat.questions import unstorable_character
from chat.retrieval.filters import NO_FILTERS, SearchFilters, parse_filters
from corpus.models import Collection
from corpus.permissions import Denied, collection_for, readable_collections

logger = logging.getLogger(__name__)

HISTORY_MESSAGES = 6
TITLE_CHARS = 80
# How often a running answer checks whether the user pressed stop (a DB read each time).
STOP_POLL_SECONDS = 0.3


class CannotRegenerate(Exception):
    """The answer cannot be asked again (str(exc) says why)."""


@dataclass
class AskEvent:
    kind: str  # "start" (message ids known) | "token" (text) | "done" (message final)
    message: Message
    text: str = ""
    upstream_failure: bool = False  # on "done": the LLM failed (vs. nothing to search or found)
    not_found: bool = False  # on "done": nothing retrieved was relevant enough (an answer, not a failure)


def run_to_end(events: Iterator[AskEvent]) -> AskEvent:
    """Consume an ask stream; the last ("done") event."""
    return deque(events, maxlen=1)[0]


def conversation_start(*, user, collection: Collection | None = None, title: str = "",
                       source: str = Conversation.Source.CHAT) -> Conversation:
    """A new conversation; `source` says where it was started (chat page, API or command line)."""
    return Conversation.objects.create(user=user, collection=collection, title=title[:TITLE_CHARS], source=source)


class InvalidTitle(ValueError):
    """A title that cannot be used (str(exc) says why)."""


def conversation_rename(*, conversation: Conversation, title: str) -> Conversation:
    """Give `conversation` a new title (whitespace collapsed); raises InvalidTitle if it is empty or
    too long. Renaming does not move the conversation up the list (updated_at is kept)."""
    title = " ".join(title.split())
    limit = Conversation._meta.get_field("title").max_length
    if not title:
        raise InvalidTitle("The title is empty.")
    if len(title) > limit:
        raise InvalidTitle(f"The title is longer than {limit} characters.")
    unstorable = unstorable_character(title)
    if unstorable:
        raise InvalidTitle(f"The title contains {unstorable}.")
    Conversation.objects.filter(pk=conversation.pk).update(title=title)
    conversation.title = title
    return conversation


def conversation_delete(*, conversation: Conversation) -> None:
    """Delete `conversation` with its messages."""
    conversation.delete()


def collections_for(user, slug: str | None) -> tuple[QuerySet[Collection], Collection | None]:
    """The collections to search: the readable one named `slug`, or all readable ones.
    Raises corpus.permissions.Denied (404) when `slug` is not a collection `user` may read."""
    if not slug:
        return readable_collections(user), None
    picked = collection_for(user, slug)
    return Collection.objects.filter(pk=picked.pk), picked


def history_of(conversation: Conversation, *, before: Message | None = None) -> list[tuple[str, str]]:
    """The last few (role, content) turns, oldest first; failed answers without text are left out."""
    messages = conversation.messages.exclude(content="")
    if before is not None:
        messages = messages.filter(pk__lt=before.pk)
    recent = list(messages.order_by("-created_at", "-id")[:HISTORY_MESSAGES])
    return [(m.role, m.content) for m in reversed(recent)]


def message_record_failure(*, conversation: Conversation, question: str, error: str) -> Message:
    """Store a question that could not be answered, with the reason as the reply."""
    Message.objects.create(conversation=conversation, role=Message.Role.USER, content=question)
    reply = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT,
                                   status=Message.Status.FAILED, error=error)
    if not conversation.title:
        conversation.title = question.strip()[:TITLE_CHARS]
    conversation.save(update_fields=["title", "updated_at"])
    return reply


def message_request_stop(*, message: Message) -> bool:
    """Ask a running answer to stop; False when it had already finished."""
    return bool(Message.objects.filter(pk=message.pk, status=Message.Status.STREAMING)
                .update(stop_requested=True))


def message_ask(*, conversation: Conversation, question: str, collection_slug: str | None = None,
                rse: str | None = "balanced", stream: bool = True,
                filters: SearchFilters = NO_FILTERS) -> Iterator[AskEvent]:
    """Answer `question` in `conversation` from the documents passing `filters`, yielding start,
    token... and done events.

    The assistant message is saved however the generator ends: complete, failed (with a message
    for the user), or stopped (closed early or stop requested) with the partial text kept.
    Raises corpus.permissions.Denied before storing anything if `collection_slug` is not readable.
    """
    collections, picked = collections_for(conversation.user, collection_slug)
    history = history_of(conversation)
    question = question.strip()
    Message.objects.create(conversation=conversation, role=Message.Role.USER, content=question)
    reply = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT,
                                   status=Message.Status.STREAMING, filters=filters.as_json(),
                                   collection=picked, collection_slug=picked.slug if picked else "")
    if not conversation.title:
        conversation.title = question[:TITLE_CHARS]
    if picked is not None:
        conversation.collection = picked
    conversation.save()

    parts: list[str] = []
    upstream_failure = not_found = False
    prepared = None
    try:
        yield AskEvent("start", reply)
        prepared = prepare(question=question, collections=collections, history=history, rse=rse, filters=filters)
        reply.query, reply.mode = prepared.query, prepared.mode
        reply.model = prepared.llm.model if prepared.llm else ""
        reply.citations, reply.relevance = prepared.citations, prepared.relevance
        reply.save(update_fields=["query", "mode", "model", "citations", "relevance"])
        if stream:
            last_poll = time.monotonic()
            pieces = stream_answer(prepared, history)
            try:
                for piece in pieces:
                    parts.append(piece)
                    yield AskEvent("token", reply, piece)
                    if time.monotonic() - last_poll >= STOP_POLL_SECONDS:
                        last_poll = time.monotonic()
                        if Message.objects.filter(pk=reply.pk, stop_requested=True).exists():
                            reply.status = Message.Status.STOPPED
                            break
            finally:
                pieces.close()  # closes the LLM's HTTP stream when we stop early
        else:
            parts.append(complete_answer(prepared, history))
        if reply.status == Message.Status.STREAMING:
            reply.status = Message.Status.COMPLETE
    except NotFound as exc:
        reply.status, reply.error, not_found = Message.Status.NOT_FOUND, str(exc), True
    except AnswerError as exc:
        reply.status, reply.error = Message.Status.FAILED, str(exc)
        upstream_failure = isinstance(exc, LLMFailed)
    except GeneratorExit:
        # The client went away (stop button, closed tab): keep what was written so far.
        reply.status = Message.Status.STOPPED
        raise
    except Exception:
        error_id = log_failure(logger, "answering message %s failed", reply.pk)
        reply.status, reply.error = Message.Status.FAILED, server_failure_message(error_id)
    finally:
        reply.content = "".join(parts)
        if prepared is not None:
            # The grounding pass (LLM answers) and the sources the answer cites, kept as the answer.
            answer = finish(prepared, reply.content, complete=reply.status == Message.Status.COMPLETE)
            reply.content, reply.citations, reply.confidence = answer.text, answer.citations, answer.confidence
        if reply.status == Message.Status.STREAMING:
            reply.status = Message.Status.STOPPED
        reply.save(update_fields=["content", "status", "error", "citations", "confidence"])
    yield AskEvent("done", reply, upstream_failure=upstream_failure, not_found=not_found)


def message_regenerate(*, message: Message, rse: str | None = "balanced", stream: bool = True) -> Iterator[AskEvent]:
    """Ask the question of `message`, the latest answer of its conversation, again: message_ask's
    events for a new question and answer, which replace the old pair as soon as they are stored (a
    rating of the old answer keeps its own copy). The new answer searches the collection the old
    one did, narrowed by the same filters, and sees the conversation before the old question.

    Raises, when first advanced and before changing anything: CannotRegenerate if `message` is not
    the latest answer or is still being written (or was regenerated or deleted by a concurrent
    request: the conversation's row is locked while the check and the swap are made, so two
    regenerates of one answer give one new pair, not two); corpus.permissions.Denied if its
    collection is no longer readable.
    """
    with transaction.atomic():  # the old pair is gone only once the new one is stored
        conversation = Conversation.objects.select_for_update().filter(pk=message.conversation_id).first()
        if conversation is None:
            raise CannotRegenerate("This conversation has just been deleted.")
        latest = conversation.messages.order_by("-id").first()
        if latest is not None and latest.pk == message.pk:
            message = latest  # its status as committed now, not as the caller read it
        elif message.role == Message.Role.ASSISTANT and not Message.objects.filter(pk=message.pk).exists():
            raise CannotRegenerate("This answer has just been regenerated or deleted.")
        if message.role != Message.Role.ASSISTANT or latest is None or latest.pk != message.pk:
            raise CannotRegenerate("Only the latest answer of a conversation can be regenerated.")
        if message.status == Message.Status.STREAMING:
            raise CannotRegenerate("This answer is still being written.")
        question = conversation.messages.filter(role=Message.Role.USER, pk__lt=message.pk).order_by("-id").first()
        if question is None or not question.content.strip():
            raise CannotRegenerate("There is no question to ask again.")
        events = message_ask(conversation=conversation, question=question.content,
                             collection_slug=_searched_slug(message), rse=rse, stream=stream,
                             filters=parse_filters(message.filters or None))
        Message.objects.filter(pk__in=[question.pk, message.pk]).delete()
        first = next(events)
    yield first
    yield from events


def _searched_slug(message: Message) -> str | None:
    """The current slug of the collection `message` searched (None: all readable ones). Found by
    id, so a renamed collection's slug taken by another never answers. Raises Denied (404) when
    that collection is gone."""
    if message.collection_id is not None:
        slug = Collection.objects.filter(pk=message.collection_id).values_list("slug", flat=True).first()
        if slug:
            return slug
    if message.collection_slug:
        # Answers stored before collections were kept by id, or whose collection was deleted.
        raise Denied(f"The collection {message.collection_slug!r} this answer searched is gone.", status=404)
    return None
