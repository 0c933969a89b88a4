"""GET|POST /api/tokens/ and DELETE /api/tokens/{id}/: the caller's personal API tokens.

A list never shows a key or its hash; a new token's key is in the 201 answer and never again.
Another user's token is 404. Making or revoking a token takes a session or a token that is not
read-only (accounts.permissions.TokenScope refuses read-only ones, as for every write).
Writes go through accounts.services."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import ApiToken
from accounts.services import token_create, token_revoke
from api.errors import errors


class TokenInput(serializers.Serializer):
    name = serializers.CharField(max_length=100, help_text="What the token is for, e.g. \"laptop script\".")
    read_only = serializers.BooleanField(required=False, default=False,
                                         help_text="May read, search and ask, never change anything.")
    expires = serializers.DateTimeField(required=False, allow_null=True, default=None,
                                        help_text="When it stops working (ISO 8601, in the future); "
                                                  "null or absent: never.")

    def validate(self, attrs):
        unknown = set(self.initial_data) - set(self.fields) if isinstance(self.initial_data, dict) else set()
        if unknown:
            raise serializers.ValidationError(f"Unknown field(s): {', '.join(sorted(unknown))}.")
        return attrs


class TokenOutput(serializers.ModelSerializer):
    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "read_only", "created", "last_used", "expires"]
        read_only_fields = fields


class NewTokenOutput(TokenOutput):
    key = serializers.CharField(help_text="The key: shown this once (only its hash is kept).")

    class Meta(TokenOutput.Meta):
        fields = [*TokenOutput.Meta.fields, "key"]
        read_only_fields = fields


class TokenListView(APIView):
    pagination_class = LimitOffsetPagination

    @extend_schema(responses={200: TokenOutput(many=True), **errors(401)}, tags=["tokens"],
                   summary="Your API tokens (never their keys), newest first")
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(ApiToken.objects.filter(user=request.user), request, view=self)
        return paginator.get_paginated_response(TokenOutput(page, many=True).data)

    @extend_schema(request=TokenInput, responses={201: NewTokenOutput, **errors(400, 401, 403)}, tags=["tokens"],
                   summary="Make a token; its key is shown once")
    def post(self, request: Request) -> Response:
        data = TokenInput(data=request.data)
        data.is_valid(raise_exception=True)
        token, key = token_create(user=request.user, request=request, **data.validated_data)
        token.key = key
        return Response(NewTokenOutput(token).data, status=status.HTTP_201_CREATED)


class TokenDetailView(APIView):
    @extend_schema(responses={204: None, **errors(401, 403, 404)}, tags=["tokens"],
                   summary="Revoke one of your tokens")
    def delete(self, request: Request, pk: int) -> Response:
        if not token_revoke(user=request.user, token_id=pk, request=request):
            raise NotFound(f"No token {pk} of yours.")
        return Response(status=status.HTTP_204_NO_CONTENT)
