"""Writes of the chat: start conversations, ask a question and record the answer as it streams.

answer_run() is the one answer service: the chat page, POST /api/ask/, MCP's ask and the command
go through message_ask(), which stores the question and an assistant message at once, then updates
that message as the answer comes (a partial answer survives a stop, a dropped connection or an LLM
failure); /v1, which stores nothing, calls answer_run() itself.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import QuerySet

from chat.answering.pipeline import (
    AnswerError,
    GroundedStream,
    LLMFailed,
    NotFound,
    Prepared,
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


@dataclass
class AnswerRun:
    """One answer as answer_run() writes it: what it is built from, then, once the run ends, its
    text and cited sources (grounded), its status (a Message.Status) and why it has no (complete)
    answer. `upstream_failure`: the LLM failed; `not_found`: nothing retrieved was relevant enough
    (an answer, not a failure); `server_error_id`: an unexpected failure, logged under that id."""

    prepared: Prepared | None = None
    text: str = ""
    citations: list[dict] = field(default_factory=list)
    status: str = Message.Status.STREAMING
    error: str = ""
    upstream_failure: bool = False
    not_found: bool = False
    server_error_id: str = ""
    confidence: float | None = None  # the reader's, of an extractive answer it chose (pipeline.Answer)


def answer_run(run: AnswerRun, *, question: str, collections: QuerySet[Collection],
               history: Sequence[tuple[str, str]] = (), rse: str | None = "balanced",
               filters: SearchFilters = NO_FILTERS, stream: bool = True, grounded: bool = False,
               on_prepared: Callable[[Prepared], None] | None = None,
               stop_requested: Callable[[], bool] | None = None, label: str = "an answer") -> Iterator[str]:
    """The one answer service: `question` answered from `collections` (already limited to what the
    asker may read) and the documents passing `filters`, for the chat, /api/ask/, /v1 and MCP alike.

    Yields the answer's text as it is written when `stream` (nothing otherwise): as the LLM writes
    it, or, `grounded`, as the grounding pass leaves it (GroundedStream: for clients that cannot
    take text back). `on_prepared` is called once the sources are found; `stop_requested` is polled
    every STOP_POLL_SECONDS. However the generator ends (finished, failed, stopped, or closed early),
    `run` holds the outcome: the grounding pass has run over the text written so far (a partial
    answer is kept as written, never replaced) and the sources are those it cites."""
    parts: list[str] = []
    streamed = None
    try:
        run.prepared = prepare(question=question, collections=collections, history=history, rse=rse, filters=filters)
        if on_prepared is not None:
            on_prepared(run.prepared)
        if stream:
            streamed = GroundedStream(run.prepared) if grounded else None
            last_poll = time.monotonic()
            pieces = stream_answer(run.prepared, history)
            try:
                for piece in pieces:
                    parts.append(piece)
                    out = streamed.add(piece) if streamed is not None else piece
                    if out:
                        yield out
                    if stop_requested is not None and time.monotonic() - last_poll >= STOP_POLL_SECONDS:
                        last_poll = time.monotonic()
                        if stop_requested():
                            run.status = Message.Status.STOPPED
                            break
            finally:
                pieces.close()  # closes the LLM's HTTP stream when we stop early
        else:
            parts.append(complete_answer(run.prepared, history))
        if run.status == Message.Status.STREAMING:
            run.status = Message.Status.COMPLETE
    except NotFound as exc:
        run.status, run.error, run.not_found = Message.Status.NOT_FOUND, str(exc), True
    except AnswerError as exc:
        run.status, run.error = Message.Status.FAILED, str(exc)
        run.upstream_failure = isinstance(exc, LLMFailed)
    except GeneratorExit:
        # The client went away (stop button, closed tab): keep what was written so far.
        run.status = Message.Status.STOPPED
        raise
    except Exception:
        run.server_error_id = log_failure(logger, "answering %s failed", label)
        run.status, run.error = Message.Status.FAILED, server_failure_message(run.server_error_id)
    finally:
        run.text = "".join(parts)
        if run.prepared is not None:
            # The grounding pass (LLM answers) and the sources the answer cites, kept as the answer.
            answer = finish(run.prepared, run.text, complete=run.status == Message.Status.COMPLETE)
            run.text, run.citations, run.confidence = answer.text, answer.citations, answer.confidence
        if run.status == Message.Status.STREAMING:
            run.status = Message.Status.STOPPED
    if streamed is not None:
        rest = streamed.rest(run.text)
        if rest:
            yield rest


def message_ask(*, conversation: Conversation, question: str, collection_slug: str | None = None,
                rse: str | None = "balanced", stream: bool = True,
                filters: SearchFilters = NO_FILTERS) -> Iterator[AskEvent]:
    """Answer `question` in `conversation` from the documents passing `filters` (answer_run),
    yielding start, token... and done events.

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
    conversation.collection = picked  # what the picker shows next: None, every collection
    conversation.save()

    def sources_found(prepared: Prepared) -> None:
        reply.query, reply.mode = prepared.query, prepared.mode
        reply.model = prepared.llm.model if prepared.llm else ""
        reply.citations, reply.relevance = prepared.citations, prepared.relevance
        reply.save(update_fields=["query", "mode", "model", "citations", "relevance"])

    run = AnswerRun()
    pieces = answer_run(run, question=question, collections=collections, history=history, rse=rse,
                        filters=filters, stream=stream, on_prepared=sources_found, label=f"message {reply.pk}",
                        stop_requested=lambda: Message.objects.filter(pk=reply.pk, stop_requested=True).exists())
    try:
        yield AskEvent("start", reply)
        for piece in pieces:
            yield AskEvent("token", reply, piece)
    finally:
        pieces.close()  # closed early: the run keeps what was written so far (stopped)
        reply.content, reply.citations, reply.error = run.text, run.citations, run.error
        reply.confidence = run.confidence
        reply.status = Message.Status.STOPPED if run.status == Message.Status.STREAMING else run.status
        reply.save(update_fields=["content", "status", "error", "citations", "confidence"])
    yield AskEvent("done", reply, upstream_failure=run.upstream_failure, not_found=run.not_found)


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
