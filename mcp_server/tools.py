"""What the MCP tools do, for one caller: plain Django code on the request's thread and database
connection, the same services as POST /api/search/ and /api/ask/.

Every read goes through corpus.permissions: a collection or document the caller may not read is
a ToolError worded exactly like one that does not exist. Bad arguments are ToolErrors with a
message for the model (the SDK returns them as `isError` results, never an HTTP error). Links are
absolute URLs of the web UI's passage views (opening them needs the user signed in there). Text
follows the rule of every API surface (chat.client_text): an answer is inert Markdown, every other
text field plain text with its markup escaped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from mcp.server.mcpserver.exceptions import ToolError

from chat.answering.payload import answer_payload
from chat.client_text import client_text
from chat.models import Conversation
from chat.questions import InvalidQuestion, clean_question, unstorable_character
from chat.retrieval.filters import FilterError, parse_filters
from chat.retrieval.payload import search_payload
from chat.retrieval.search import SearchError
from chat.retrieval.search import search as run_search
from chat.services import conversation_start, message_ask, run_to_end
from chat.throttles import AskThrottle, SearchThrottle
from corpus.models import Collection
from corpus.permissions import Denied, collection_for, document_for, readable_collections

MAX_PASSAGE_CHARS = 20_000  # one read_passage call: about five pages of text


@dataclass(frozen=True)
class Caller:
    """Who calls: the request (its user is the token's, its host makes the absolute links)."""

    request: HttpRequest

    @property
    def user(self):
        return self.request.user

    def link(self, path: str) -> str:
        return self.request.build_absolute_uri(path)

    def passage_link(self, document_id: int, start: int, end: int) -> str:
        return self.link(f"{reverse('chat:document-passage', args=[document_id])}?start={start}&end={end}#passage")


def _throttled(caller: Caller, throttle) -> None:
    """The REST API's per-user budgets apply to the same operations here (API_THROTTLE_RATES)."""
    if not throttle.allow_request(caller.request, None):
        wait = max(1, math.ceil(throttle.wait() or 1))
        raise ToolError(f"Too many requests: try again in {wait} seconds.")


def _storable(value: str, what: str) -> str:
    """`value`, or a ToolError when Postgres could not take it as text (NUL, lone surrogate)."""
    problem = unstorable_character(value)
    if problem:
        raise ToolError(f"The {what} contains {problem}.")
    return value


def _collection(caller: Caller, slug: str | None) -> Collection | None:
    if slug is None or not slug.strip():
        return None
    _storable(slug, "collection")
    try:
        return collection_for(caller.user, slug.strip())
    except Denied as exc:
        raise ToolError(str(exc)) from exc


def list_collections(caller: Caller) -> dict[str, Any]:
    """The collections the caller may read, by slug."""
    rows = (readable_collections(caller.user).order_by("slug")
            .values("slug", "name", "description", "is_public"))
    return {"collections": [{"slug": r["slug"], "name": client_text(r["name"]),
                             "description": client_text(r["description"]), "public": r["is_public"]} for r in rows]}


def _linked(caller: Caller, found: dict[str, Any]) -> dict[str, Any]:
    """search_payload's body (POST /api/search/'s) with a link to each chunk's and segment's passage."""
    for chunk in found["chunks"]:
        chunk["url"] = caller.passage_link(chunk["document"]["id"], chunk["start"], chunk["end"])
    for segment in found["segments"]:
        segment["url"] = caller.passage_link(segment["document"]["id"], segment["char_start"], segment["char_end"])
    return found


def _filters(filters: dict | None):
    try:
        return parse_filters(filters)
    except FilterError as exc:
        raise ToolError(str(exc)) from exc


def search(caller: Caller, *, query: str, collection: str | None = None, k: int = 10,
           filters: dict | None = None) -> dict[str, Any]:
    """Hybrid search with RSE (the balanced preset), as POST /api/search/ and in its shape
    (chat.retrieval.payload), each chunk and segment with its passage's link: a chunk's
    `start`/`end` and a segment's `char_start`/`char_end` are character offsets (read_passage's),
    a segment's `start`/`end` its chunk range."""
    parsed = _filters(filters)
    _storable(query, "query")
    picked = _collection(caller, collection)
    collections = (Collection.objects.filter(pk=picked.pk) if picked is not None
                   else readable_collections(caller.user))
    _throttled(caller, SearchThrottle())
    try:
        result = run_search(query=query, collections=collections, k=k, filters=parsed)
    except SearchError as exc:
        raise ToolError(str(exc)) from exc
    return _linked(caller, search_payload(result))


def ask(caller: Caller, *, question: str, collection: str | None = None,
        filters: dict | None = None) -> dict[str, Any]:
    """The question answered as POST /api/ask/ answers it (stored as an API conversation of the
    caller's), from the documents passing `filters`: the answer with [n] citations, each with its
    document, text, character range and the link to the cited passage. Nothing found: an empty
    answer and `error` saying so."""
    try:
        question = clean_question(question)
    except InvalidQuestion as exc:
        raise ToolError(str(exc)) from exc
    parsed = _filters(filters)
    picked = _collection(caller, collection)
    _throttled(caller, AskThrottle())
    conversation = conversation_start(user=caller.user, source=Conversation.Source.API)
    done = run_to_end(message_ask(conversation=conversation, question=question,
                                  collection_slug=picked.slug if picked is not None else None, stream=False,
                                  filters=parsed))
    payload = answer_payload(done.message)
    stored = {c["n"]: c for c in done.message.citations}
    for citation in payload["citations"]:
        citation["url"] = caller.link(citation["url"])
        citation["char_start"] = stored[citation["n"]].get("char_start")
        citation["char_end"] = stored[citation["n"]].get("char_end")
    return {key: payload[key] for key in ("answer", "mode", "status", "error", "confidence", "citations", "query")}


def read_passage(caller: Caller, *, document: int, start: int, end: int) -> dict[str, Any]:
    """The text of a document the caller may read between character offsets [start, end), at
    most MAX_PASSAGE_CHARS of it; `end` past the text is cut to the text's length."""
    if start < 0:
        raise ToolError("start must be 0 or more.")
    if end <= start:
        raise ToolError("end must be greater than start.")
    try:
        found = document_for(caller.user, document)
    except Denied as exc:
        raise ToolError(str(exc)) from exc
    length = len(found.text)
    if start >= length:
        raise ToolError(f"start is past the end of the document ({length} characters).")
    end = min(end, length)
    if end - start > MAX_PASSAGE_CHARS:
        raise ToolError(f"A passage is at most {MAX_PASSAGE_CHARS} characters: read it in several calls.")
    return {"document": {"id": found.pk, "title": client_text(found.title), "source": client_text(found.source)},
            "start": start, "end": end, "length": length, "text": client_text(found.text[start:end]),
            "page": found.page_at(start), "url": caller.passage_link(found.pk, start, end)}
