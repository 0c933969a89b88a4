"""POST /api/ask/: a question answered from the caller's readable collections, with citations.
The same pipeline as the chat page (chat.services.message_ask); the exchange is stored in a
conversation that can be continued by passing its id back. The body is
chat.answering.payload.answer_payload through AskOutput (also what `manage.py ask --json` prints)."""

from __future__ import annotations

from collections.abc import Iterator

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.serializers import MARKDOWN, CitationOutput, FiltersField, QuestionField, plain_text
from chat.answering.payload import answer_payload
from chat.client_markdown import client_markdown_stream
from chat.models import Conversation, Message
from chat.retrieval.filters import NO_FILTERS
from chat.retrieval.rse import PRESETS
from chat.services import conversation_start, message_ask, run_to_end
from chat.sse import sse_event, sse_response
from chat.throttles import AskThrottle
from corpus.permissions import collection_for


class AskInput(serializers.Serializer):
    question = QuestionField(error_messages={"blank": "The question is empty."},
                             help_text="At most 2000 characters (chat.questions.MAX_QUESTION_CHARS).")
    collection = serializers.SlugField(required=False, allow_blank=True,
                                       help_text="Search only this collection (default: all you may read).")
    conversation = serializers.IntegerField(required=False, min_value=1,
                                            help_text="Continue this conversation (follow-ups are rewritten).")
    stream = serializers.BooleanField(default=False, help_text="Answer as text/event-stream: token events, "
                                                               "then a done event with the full response.")
    rse = serializers.ChoiceField(choices=[*PRESETS, "none"], default="balanced",
                                  help_text='RSE preset, or "none" for top-k chunks.')
    filters = FiltersField()


class AskOutput(serializers.Serializer):
    answer = serializers.CharField(help_text=MARKDOWN)
    mode = serializers.ChoiceField(choices=["llm", "extractive", ""])
    status = serializers.ChoiceField(choices=Message.Status.choices)
    error = plain_text("Why there is no (complete) answer; empty when all went well.")
    confidence = serializers.FloatField(
        allow_null=True,
        help_text="Extractive answers: how likely (0-1) the reader found it that the first quote answers the "
                  "question; below 0.8 the answer says the passages may not answer it. null for LLM answers.")
    citations = CitationOutput(many=True)
    query = plain_text("The standalone query used for retrieval.")
    conversation = serializers.IntegerField()
    message = serializers.IntegerField()


class EventStreamRenderer(BaseRenderer):
    """Lets clients send "Accept: text/event-stream"; errors then arrive as one "error" event."""

    media_type = "text/event-stream"
    format = "sse"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> str:
        return sse_event("error", data if isinstance(data, dict) else {"detail": data})


# One server-sent event as clients (and schemathesis) see it: its name and one line of JSON data.
SSE_EVENT = {"type": "object", "required": ["event", "data"], "properties": {
    "event": {"type": "string", "enum": ["start", "token", "done", "error"]},
    "data": {"type": "string", "description": "The event's JSON: `start` {conversation, message}, `token` "
                                              "{text}, `done` the JSON response's body, `error` {detail}."}}}


def _json_or_events(responses: dict) -> dict:
    """Each response documented as JSON and, for `Accept: text/event-stream`, as events."""
    documented = {}
    for code, response in responses.items():
        documented[(code, "application/json")] = response
        documented[(code, "text/event-stream")] = OpenApiResponse(SSE_EVENT, description=response.description)
    return documented


class AskView(APIView):
    read_like = True  # a POST that only reads: read-only tokens may use it (accounts.permissions)
    renderer_classes = [JSONRenderer, EventStreamRenderer]
    throttle_classes = [AskThrottle]

    @extend_schema(
        request=AskInput,
        responses=_json_or_events({
            200: OpenApiResponse(AskOutput, description="The answer."),
            502: OpenApiResponse(AskOutput, description="The LLM failed; the partial answer, if any, is in `answer`."),
            **errors(400, 401, 404, 429)}),
        summary="Answer a question with citations", tags=["ask"],
        description="Nothing found is a 200 with an empty answer and `error` set. With `stream: true` and "
                    "`Accept: text/event-stream` the answer arrives as server-sent events: `start` "
                    "({conversation, message}), `token` ({text}) events, then `done` with this response's body.")
    def post(self, request: Request) -> Response:
        data = AskInput(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        slug = params.get("collection") or None
        if slug:
            collection_for(request.user, slug)
        if params.get("conversation"):
            conversation = Conversation.objects.filter(pk=params["conversation"], user=request.user).first()
            if conversation is None:
                raise NotFound(f"No conversation {params['conversation']} of yours.")
        else:
            conversation = conversation_start(user=request.user, source=Conversation.Source.API)
        events = message_ask(conversation=conversation, question=params["question"], collection_slug=slug,
                             rse=None if params["rse"] == "none" else params["rse"], stream=params["stream"],
                             filters=params.get("filters", NO_FILTERS))
        if params["stream"]:
            return sse_response(_stream(events))
        done = run_to_end(events)
        return Response(AskOutput(answer_payload(done.message)).data,
                        status=status.HTTP_502_BAD_GATEWAY if done.upstream_failure else status.HTTP_200_OK)


def _stream(events) -> Iterator[str]:
    """start, token... (the answer's Markdown made inert as it comes, chat.client_markdown), done."""
    after: list[str] = []  # the done event, sent once the last token is out

    def texts() -> Iterator[str]:
        for event in events:
            if event.kind == "token":
                yield event.text
            elif event.kind == "done":
                after.append(sse_event("done", AskOutput(answer_payload(event.message)).data))

    try:
        start = next(events)
        yield sse_event("start", {"conversation": start.message.conversation_id, "message": start.message.pk})
        for text in client_markdown_stream(texts()):
            yield sse_event("token", {"text": text})
        yield from after
    finally:
        events.close()  # the client went away: save the partial answer now
