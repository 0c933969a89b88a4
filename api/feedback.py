"""POST|DELETE /api/messages/{id}/feedback/: rate an answer you got (from /api/ask/, the chat page or
/v1 is stored per user), as the chat page's thumbs do: up or down, and optionally a comment, the
source that answers the question (one of the answer's numbered sources, or any document you may
read) and evidence phrases copied from it. The rules are chat.feedback's; permissions
corpus.permissions'."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from chat.feedback import (
    MAX_COMMENT_CHARS,
    MAX_PHRASE_CHARS,
    MAX_PHRASES,
    FeedbackError,
    feedback_clear,
    feedback_describe,
    feedback_rate,
)
from chat.models import Feedback, Message


class FeedbackInput(serializers.Serializer):
    rating = serializers.ChoiceField(choices=Feedback.Rating.values)
    comment = serializers.CharField(required=False, allow_blank=True, max_length=MAX_COMMENT_CHARS)
    source = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                      help_text="The number [n] of the answer's source that answers the question.")
    document = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                        help_text="Or any document you may read that answers it (its id).")
    evidence = serializers.ListField(child=serializers.CharField(max_length=MAX_PHRASE_CHARS), required=False,
                                     max_length=MAX_PHRASES,
                                     help_text="Phrases copied exactly from that source that answer the question.")

    def validate(self, attrs):
        if attrs.get("source") is not None and attrs.get("document") is not None:
            raise serializers.ValidationError("Give either source or document, not both.")
        return attrs


class FeedbackOutput(serializers.Serializer):
    rating = serializers.ChoiceField(choices=Feedback.Rating.values)
    comment = serializers.CharField()
    source = serializers.CharField(help_text="The chosen document's source; empty when none was chosen.")
    evidence = serializers.ListField(child=serializers.CharField())


class MessageFeedbackView(APIView):
    def _message(self, request: Request, pk: int) -> Message:
        message = Message.objects.filter(pk=pk, conversation__user=request.user, role=Message.Role.ASSISTANT).first()
        if message is None:
            raise NotFound(f"No answer {pk} of yours.")
        return message

    @extend_schema(request=FeedbackInput, responses={200: FeedbackOutput, **errors(400, 401, 404)},
                   tags=["ask"], summary="Rate an answer (with its source and evidence)")
    def post(self, request: Request, pk: int) -> Response:
        message = self._message(request, pk)
        data = FeedbackInput(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        try:
            feedback = feedback_rate(message=message, user=request.user, rating=given["rating"])
            if set(given) - {"rating"}:
                feedback_describe(feedback=feedback, user=request.user, comment=given.get("comment", ""),
                                  source_n=given.get("source"), document_id=given.get("document"),
                                  evidence_text="\n".join(given.get("evidence", [])))
        except FeedbackError as exc:  # the rating is kept; the details are what is wrong
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(FeedbackOutput(feedback).data)

    @extend_schema(request=None, responses={204: None, **errors(401, 404)}, tags=["ask"],
                   summary="Take a rating back")
    def delete(self, request: Request, pk: int) -> Response:
        feedback_clear(message=self._message(request, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)
