"""OpenAI-compatible endpoints, so any OpenAI SDK or chat front end can use ragweb as a "model":

- GET /v1/models: one model per collection the caller may read, `ragweb/<slug>`, plus `ragweb`
  (all of them).
- POST /v1/chat/completions: the last user message is the question, the earlier user and
  assistant turns its history (system messages are ignored: the answer pipeline has its own
  prompt); answered by the chat's answer service (chat.services.answer_run: the same search,
  grounding, errors and limits; extractive without an LLM), streamed (`chat.completion.chunk`
  events, then `data: [DONE]`) or not. Nothing is stored: this module only translates.

The message content is the answer's Markdown made inert (chat.client_markdown: no raw HTML, no
javascript: links, no images), as the chat page shows it. Streamed, it is the same text: an LLM's
answer goes out a line at a time as the grounding pass leaves it (a client cannot take text
back). Only the question and the turns of history are read (used_messages), after the message
count is checked (check_message_count) and, in the parser, the body's size. The key is the DRF
API token, sent as `Authorization: Bearer KEY`. Citations are `[n]` in the text and the extra
field `citations` (on the completion, and on the last streamed chunk): the numbered sources the
answer cites, each a chunk range of a document, its text and title plain text (chat.client_text).
Errors come in OpenAI's shape (api.errors), e.g. 404 `model_not_found` for a collection the
caller may not read.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.authentication import ApiTokenAuthentication, BearerApiTokenAuthentication
from api.errors import OpenAIError
from api.serializers import MARKDOWN, FiltersField, SourceOutput, plain_text
from chat.answering.payload import source_payload
from chat.client_markdown import client_markdown, client_markdown_stream
from chat.client_text import client_text
from chat.questions import InvalidQuestion, clean_question
from chat.retrieval.filters import NO_FILTERS
from chat.services import HISTORY_MESSAGES, AnswerRun, answer_run
from chat.throttles import AskThrottle
from corpus.models import Collection
from corpus.permissions import Denied, collection_for, readable_collections

logger = logging.getLogger(__name__)

MODEL_ALL = "ragweb"
MODEL_PREFIX = MODEL_ALL + "/"
ROLES = ("system", "developer", "user", "assistant", "tool")
# Messages in one /v1/chat/completions request, refused (400) before they are validated (~20 us each): only
# the last HISTORY_MESSAGES turns are used, and 500 leaves any client's real history room.
V1_MAX_MESSAGES = 500


def model_id(collection: Collection | None) -> str:
    return MODEL_ALL if collection is None else MODEL_PREFIX + collection.slug


def collections_of_model(user, model: str) -> QuerySet[Collection]:
    """The collections the model `model` answers from. OpenAIError 404 model_not_found when it
    names no collection `user` may read (existing or not: the message is the same)."""
    if model == MODEL_ALL:
        return readable_collections(user)
    if model.startswith(MODEL_PREFIX):
        try:
            return Collection.objects.filter(pk=collection_for(user, model[len(MODEL_PREFIX):]).pk)
        except Denied:
            pass
    raise OpenAIError(f"The model {model!r} does not exist or you do not have access to it.",
                      status_code=status.HTTP_404_NOT_FOUND, code="model_not_found", param="model")


# --- output shapes -------------------------------------------------------------------------------

class ModelOutput(serializers.Serializer):
    id = serializers.CharField(help_text=f'"{MODEL_ALL}" (every collection you may read) or '
                                         f'"{MODEL_PREFIX}<collection slug>".')
    object = serializers.ChoiceField(choices=["model"])
    created = serializers.IntegerField(help_text="Unix time the collection was created.")
    owned_by = serializers.CharField(help_text="The collection's owner (username), or ragweb.")
    name = plain_text("The collection's name.")


class ModelListOutput(serializers.Serializer):
    object = serializers.ChoiceField(choices=["list"])
    data = ModelOutput(many=True)


class MessageOutput(serializers.Serializer):
    role = serializers.ChoiceField(choices=["assistant"])
    content = serializers.CharField(help_text=MARKDOWN)


class ChoiceOutput(serializers.Serializer):
    index = serializers.IntegerField()
    message = MessageOutput()
    finish_reason = serializers.ChoiceField(choices=["stop"])


class ChatCompletionOutput(serializers.Serializer):
    id = serializers.CharField()
    object = serializers.ChoiceField(choices=["chat.completion"])
    created = serializers.IntegerField()
    model = serializers.CharField()
    choices = ChoiceOutput(many=True)
    citations = SourceOutput(many=True, help_text="The numbered sources the answer cites ([n] in the text).")
    ragweb_mode = serializers.ChoiceField(choices=["llm", "extractive", ""], help_text=(
        "How the answer was written: by the LLM, or quoted from the sources (extractive, no LLM); "
        "empty when nothing was answered."))
    ragweb_confidence = serializers.FloatField(allow_null=True, required=False, help_text=(
        "Extractive answers: how likely (0-1) the reader found it that the first quote answers the question; "
        "below 0.8 the answer says the passages may not answer it. null otherwise."))


class DeltaOutput(serializers.Serializer):
    role = serializers.ChoiceField(choices=["assistant"], required=False)
    content = serializers.CharField(required=False)


class ChunkChoiceOutput(serializers.Serializer):
    index = serializers.IntegerField()
    delta = DeltaOutput()
    finish_reason = serializers.ChoiceField(choices=["stop"], allow_null=True)


class ChatCompletionChunkOutput(serializers.Serializer):
    """One `data:` event of a streamed completion; the last one carries `citations`."""

    id = serializers.CharField()
    object = serializers.ChoiceField(choices=["chat.completion.chunk"])
    created = serializers.IntegerField()
    model = serializers.CharField()
    choices = ChunkChoiceOutput(many=True)
    citations = SourceOutput(many=True, required=False, help_text="On the last chunk only.")
    ragweb_mode = serializers.ChoiceField(choices=["llm", "extractive", ""], required=False, help_text=(
        "On the last chunk only. How the answer was written: by the LLM, or quoted from the sources "
        "(extractive, no LLM); empty when nothing was answered."))
    ragweb_confidence = serializers.FloatField(allow_null=True, required=False, help_text=(
        "On the last chunk only. Extractive answers: how likely (0-1) the reader found it that the first "
        "quote answers the question; below 0.8 the answer says the passages may not answer it. null otherwise."))


class OpenAIErrorBody(serializers.Serializer):
    message = serializers.CharField()
    type = serializers.CharField()
    param = serializers.CharField(allow_null=True)
    code = serializers.CharField(allow_null=True)


class OpenAIErrorOutput(serializers.Serializer):
    error = OpenAIErrorBody()


# --- input ---------------------------------------------------------------------------------------

@extend_schema_field({"oneOf": [
    {"type": "string"},
    {"type": "array", "items": {"type": "object", "required": ["type", "text"],
                                "properties": {"type": {"type": "string", "enum": ["text"]},
                                               "text": {"type": "string"}}}},
], "nullable": True})
class MessageContentField(serializers.Field):
    """A message's content: a string, or OpenAI content parts of type "text" (joined)."""

    default_error_messages = {"invalid": "content must be a string or a list of text parts.",
                              "not_text": "Only text content is supported."}

    def to_internal_value(self, data) -> str:
        if data is None:
            return ""
        if isinstance(data, str):
            return data
        if not isinstance(data, list):
            self.fail("invalid")
        texts = []
        for part in data:
            if not isinstance(part, dict):
                self.fail("invalid")
            if part.get("type") != "text" or not isinstance(part.get("text"), str):
                self.fail("not_text")
            texts.append(part["text"])
        return "\n".join(texts)


class MessageInput(serializers.Serializer):
    role = serializers.ChoiceField(choices=ROLES)
    content = MessageContentField(allow_null=True)


class ChatCompletionInput(serializers.Serializer):
    """Other OpenAI parameters (temperature, max_tokens, ...) are accepted and ignored."""

    model = serializers.CharField(help_text=f'"{MODEL_ALL}" or "{MODEL_PREFIX}<collection slug>" '
                                            "(GET /v1/models lists yours).")
    messages = MessageInput(many=True, allow_empty=False)
    stream = serializers.BooleanField(default=False)
    ragweb_filters = FiltersField(help_text="ragweb's extension: the search filter object of POST /api/search/ "
                                            "(media_type, tags, source_prefix, after, before).")

    def validate_messages(self, messages: list[dict]) -> list[dict]:
        for message in messages:  # null content (allowed, as OpenAI does) never reaches to_internal_value
            message["content"] = message["content"] or ""
        if messages[-1]["role"] != "user" or not messages[-1]["content"].strip():
            raise serializers.ValidationError("The last message must be the user's question.")
        try:
            messages[-1]["content"] = clean_question(messages[-1]["content"])
        except InvalidQuestion as exc:
            raise serializers.ValidationError(str(exc)) from exc
        return messages


def check_message_count(messages) -> None:
    """Refuse more than V1_MAX_MESSAGES messages before validating them (DRF's per-message
    serializers cost ~20 us a message, and their garbage stays in the process): OpenAIError 400.
    The conversation's size in all is capped before that, by the parser (API_MAX_JSON_BYTES, 413).
    Anything not a list is left to ChatCompletionInput to describe."""
    limit = V1_MAX_MESSAGES
    if isinstance(messages, list) and len(messages) > limit:
        raise OpenAIError(f"Send at most {limit} messages (this request has {len(messages)}); only the last "
                          f"{HISTORY_MESSAGES} turns and the question are used.",
                          status_code=status.HTTP_400_BAD_REQUEST, code="too_many_messages", param="messages")


def used_messages(messages):
    """The messages the answer reads, the only ones validated: the last (the question) and before
    it the last HISTORY_MESSAGES user or assistant turns with content. System messages and older
    turns are never read, so they cost nothing. Anything not a non-empty list is returned as is,
    for ChatCompletionInput to describe."""
    if not isinstance(messages, list) or not messages:
        return messages
    kept = [messages[-1]]
    for message in reversed(messages[:-1]):
        if len(kept) > HISTORY_MESSAGES:
            break
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        content = message.get("content")
        if content and (not isinstance(content, str) or content.strip()):
            kept.append(message)
    return kept[::-1]


def _history(messages: list[dict]) -> list[tuple[str, str]]:
    """The user and assistant turns before the question, the last few, oldest first."""
    turns = [(m["role"], m["content"]) for m in messages[:-1]
             if m["role"] in ("user", "assistant") and m["content"].strip()]
    return turns[-HISTORY_MESSAGES:]


# --- views ---------------------------------------------------------------------------------------

_OPENAI_ERRORS = {code: OpenApiResponse(OpenAIErrorOutput, description=text) for code, text in {
    400: "Bad request (OpenAI error shape).", 401: "Missing or invalid API key (`invalid_api_key`).",
    404: "No such model you may use (`model_not_found`).", 413: "The body is over API_MAX_JSON_BYTES "
                                                              "(`request_too_large`).",
    429: "Too many requests (`rate_limit_exceeded`).",
    502: "The language model failed (`upstream_error`).",
}.items()}


class OpenAIView(APIView):
    authentication_classes = [BearerApiTokenAuthentication, ApiTokenAuthentication, SessionAuthentication]
    openai_errors = True  # api.errors answers in OpenAI's error shape


def _models(collections) -> list[dict]:
    """The model of all `collections`, then one per collection."""
    newest = max((c.created_at for c in collections), default=None)
    models = [{"id": MODEL_ALL, "object": "model", "created": int(newest.timestamp()) if newest else 0,
               "owned_by": "ragweb", "name": "All your collections"}]
    models += [{"id": model_id(c), "object": "model", "created": int(c.created_at.timestamp()),
                "owned_by": c.owner.get_username() if c.owner else "ragweb", "name": client_text(c.name)}
               for c in collections]
    return models


class ModelListView(OpenAIView):
    @extend_schema(responses={200: ModelListOutput, 401: _OPENAI_ERRORS[401]}, tags=["openai"],
                   operation_id="v1_models_list",
                   summary="Models: one per collection you may read, plus one for all of them")
    def get(self, request: Request) -> Response:
        collections = readable_collections(request.user).select_related("owner").order_by("slug")
        return Response(ModelListOutput({"object": "list", "data": _models(collections)}).data)


class ModelDetailView(OpenAIView):
    @extend_schema(responses={200: ModelOutput, 401: _OPENAI_ERRORS[401], 404: _OPENAI_ERRORS[404]},
                   tags=["openai"], operation_id="v1_models_retrieve", summary="One model")
    def get(self, request: Request, model: str) -> Response:
        collections = collections_of_model(request.user, model).select_related("owner")
        found = _models(collections)[0 if model == MODEL_ALL else 1]
        return Response(ModelOutput(found).data)


class ChatCompletionView(OpenAIView):
    read_like = True  # a POST that only reads: read-only tokens may use it (accounts.permissions)
    throttle_classes = [AskThrottle]

    @extend_schema(
        request=ChatCompletionInput, tags=["openai"], operation_id="v1_chat_completions_create",
        summary="Answer the conversation's last question",
        responses={200: OpenApiResponse(ChatCompletionOutput, description="Not streamed. Streamed "
                                        "(`stream: true`): text/event-stream of `data: <chat.completion.chunk>` "
                                        "events, then `data: [DONE]`."),
                   **{code: _OPENAI_ERRORS[code] for code in (400, 401, 404, 413, 429, 502)}})
    def post(self, request: Request) -> Response | StreamingHttpResponse:
        if not isinstance(request.data, dict):
            raise OpenAIError("The body must be a JSON object.", status_code=400)
        check_message_count(request.data.get("messages"))
        received = dict(request.data)
        if "messages" in received:
            received["messages"] = used_messages(received["messages"])
        params = ChatCompletionInput(data=received)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        collections = collections_of_model(request.user, data["model"])
        messages = data["messages"]
        completion_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        meta = {"id": completion_id, "created": created, "model": data["model"]}
        run = AnswerRun()
        answer = answer_run(run, question=messages[-1]["content"], collections=collections, history=_history(messages),
                            filters=data.get("ragweb_filters", NO_FILTERS), stream=data["stream"], grounded=True,
                            label=f"the /v1 completion {completion_id}")
        if data["stream"]:
            return _event_stream(_chunks(meta, run, answer))
        for _ in answer:  # not streamed: the run ends here
            pass
        failure = _failure(run)
        if failure is not None:
            raise failure
        body = {**meta, "object": "chat.completion", **_extras(run),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": _content(run)},
                             "finish_reason": "stop"}]}
        return Response(ChatCompletionOutput(body).data)


def _failure(run: AnswerRun) -> OpenAIError | None:
    """The OpenAI error a run that failed ends in: the LLM's failure (502) or the server's (500).
    Nothing to search or nothing found is no error: the "model" says so, as the chat does."""
    if run.upstream_failure:
        return OpenAIError(run.error, status_code=status.HTTP_502_BAD_GATEWAY, type="api_error", code="upstream_error")
    if run.server_error_id:
        return OpenAIError(run.error, status_code=status.HTTP_500_INTERNAL_SERVER_ERROR, type="api_error",
                           code="server_error")
    return None


def _content(run: AnswerRun) -> str:
    """The message content of a finished run: its answer, made inert, or why there is none."""
    return client_markdown(run.text or run.error)  # the error names a collection: its owner's text


def _sources(run: AnswerRun) -> list[dict]:
    return [source_payload(c) for c in run.citations]


def _chunk(meta: dict, delta: dict, finish_reason: str | None = None, run: AnswerRun | None = None) -> str:
    """One `data:` event; the last one (given the finished `run`) carries what the completion does
    besides its text: the sources it cites, its mode and its confidence."""
    body = {**meta, "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
    if run is not None:
        body.update(_extras(run))
    data = ChatCompletionChunkOutput(body).data
    if run is None:
        data.pop("ragweb_confidence", None)  # DRF gives an absent nullable field null: it is the last chunk's only
    return f"data: {json.dumps(data)}\n\n"


def _extras(run: AnswerRun) -> dict:
    """The fields a finished run adds to the completion (and to the last streamed chunk): the same on both."""
    return {"citations": _sources(run), "ragweb_mode": run.prepared.mode if run.prepared else "",
            "ragweb_confidence": run.confidence}


def _chunks(meta: dict, run: AnswerRun, answer: Iterator[str]) -> Iterator[str]:
    """The SSE body: the role, the answer's text as the grounding pass leaves it (answer_run with
    `grounded`: what the completion would say, a line at a time), a last chunk with the sources it
    cites, [DONE]. A failure midway becomes an OpenAI error event (the SDKs raise it) before [DONE];
    nothing to search or nothing found is said as the text."""
    yield _chunk(meta, {"role": "assistant", "content": ""})
    try:
        for piece in client_markdown_stream(answer):
            yield _chunk(meta, {"content": piece})
    finally:
        answer.close()  # the client went away: drop the LLM's stream now
    failure = _failure(run)
    if failure is not None:
        yield _error_event(str(failure.detail), code=failure.error_code)
    else:
        if not run.text:
            yield _chunk(meta, {"content": client_markdown(run.error)})
        yield _chunk(meta, {}, "stop", run)
    yield "data: [DONE]\n\n"


def _error_event(message: str, *, code: str) -> str:
    error = {"message": message, "type": "api_error", "param": None, "code": code}
    return f"data: {json.dumps({'error': error})}\n\n"


def _event_stream(body: Iterator[str]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(body, content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: do not buffer the stream
    return response
