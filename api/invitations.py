"""REST API for share invitations (corpus.sharing): an owner sharing a collection with someone new
invites them; they list their pending invitations, with the sharer's name, and accept or decline
each. Until they accept, nothing of the collection reaches their searches, answers or lists.
Someone else's invitation is a 404, like one that was withdrawn."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.serializers import PlainTextField
from corpus import permissions, sharing
from corpus.models import ShareInvitation


class InvitationCollectionOutput(serializers.Serializer):
    slug = serializers.SlugField()
    name = PlainTextField("The collection's name.")


class InvitationOutput(serializers.ModelSerializer):
    collection = InvitationCollectionOutput(read_only=True)
    role = serializers.ChoiceField(choices=ShareInvitation.Role.choices, read_only=True,
                                   help_text="read: search and read it; write: also change its documents.")
    invited_by = PlainTextField("Who shared it with you (null: the account is gone).", source="invited_by.username",
                                allow_null=True, default=None)

    class Meta:
        model = ShareInvitation
        fields = ["id", "collection", "role", "invited_by", "created_at"]
        read_only_fields = fields


class InvitationAnswerOutput(serializers.Serializer):
    collection = serializers.SlugField(help_text="The collection's slug.")
    accepted = serializers.BooleanField(help_text="Whether the collection is now shared with you.")


class InvitationListView(APIView):
    pagination_class = LimitOffsetPagination

    @extend_schema(responses={200: InvitationOutput(many=True), **errors(401)}, tags=["invitations"],
                   summary="Collections shared with you, waiting for your answer")
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(sharing.invitations_pending(user=request.user), request, view=self)
        return paginator.get_paginated_response(InvitationOutput(page, many=True).data)


class InvitationAnswerView(APIView):
    accept = True

    def post(self, request: Request, pk: int) -> Response:
        invitation = permissions.invitation_for(request.user, pk)
        answer = sharing.invitation_accept if self.accept else sharing.invitation_decline
        collection = answer(invitation=invitation, request=request)
        return Response({"collection": collection.slug, "accepted": self.accept}, status=status.HTTP_200_OK)


class InvitationAcceptView(InvitationAnswerView):
    @extend_schema(request=None, responses={200: InvitationAnswerOutput, **errors(401, 404)}, tags=["invitations"],
                   summary="Accept an invitation: the collection is shared with you from now on")
    def post(self, request: Request, pk: int) -> Response:
        return super().post(request, pk)


class InvitationDeclineView(InvitationAnswerView):
    accept = False

    @extend_schema(request=None, responses={200: InvitationAnswerOutput, **errors(401, 404)}, tags=["invitations"],
                   summary="Decline an invitation: nothing is shared")
    def post(self, request: Request, pk: int) -> Response:
        return super().post(request, pk)
