"""REST API for collections: list the ones you may read, create one (you own it), show, change,
share (readers and editors by username, reader and editor groups by name) and delete. Changing,
sharing and deleting are the owner's (corpus.permissions.collection_for(manage=True)): an editor
gets 403, someone who may not read the collection 404. Writes go through corpus.services."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import Count
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import Throttled
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.quotas import wait_seconds
from api.errors import errors
from api.serializers import PLAIN_TEXT, PlainTextField
from chat.client_text import client_text
from corpus import permissions, services, sharing
from corpus.models import Collection
from corpus.quotas import CollectionRebuildQuota

SETTINGS_FIELDS = list(services.COLLECTION_SETTINGS)


class NamesField(serializers.ListField):
    """Usernames or group names (both at most 150 characters)."""

    child = serializers.CharField(max_length=150)


# role -> how its members are named
SHARES = {"readers": "username", "editors": "username", "reader_groups": "name", "editor_groups": "name"}


class PendingInvitationOutput(serializers.Serializer):
    username = PlainTextField(source="user.username")
    role = serializers.CharField(help_text="read or write: what they get when they accept.")
    invited_by = PlainTextField(source="invited_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()


MANAGERS = f"Shown to its managers only (null for others). {PLAIN_TEXT}"


class CollectionOutput(serializers.ModelSerializer):
    # Names and the description are people's words (a group's name is any text): plain text, the
    # rule of every API text field (chat.client_text).
    name = PlainTextField()
    description = PlainTextField()
    owner = PlainTextField("The owner's username (null when it has none).", source="owner.username",
                           allow_null=True, default=None)
    document_count = serializers.IntegerField(read_only=True)
    can_write = serializers.SerializerMethodField(help_text="Whether you may add, move, delete and re-ingest its "
                                                            "documents.")
    can_manage = serializers.SerializerMethodField(help_text="Whether you may change, share and delete it.")
    # The names of people and groups, plain text; null for anyone but its managers.
    readers = serializers.SerializerMethodField(help_text=f"Usernames who may read it. {MANAGERS}")
    editors = serializers.SerializerMethodField(help_text=f"Usernames who may also change its documents. {MANAGERS}")
    reader_groups = serializers.SerializerMethodField(help_text=f"Groups whose members may read it. {MANAGERS}")
    editor_groups = serializers.SerializerMethodField(help_text="Groups whose members may also change its documents. "
                                                                f"{MANAGERS}")
    invitations = serializers.SerializerMethodField(help_text="People invited to read or edit it who have not "
                                                              "answered yet (shown to its managers only).")

    class Meta:
        model = Collection
        fields = ["slug", "name", "owner", *SETTINGS_FIELDS, *SHARES, "invitations", "document_count", "can_write",
                  "can_manage", "created_at"]
        read_only_fields = fields

    def _allowed(self, level: str) -> set[int]:
        """Pks of the collections the caller may write to / manage, read once per response."""
        key = f"_{level}_pks"
        if key not in self.context:
            user = self.context["request"].user
            found = (permissions.writable_collections if level == "write" else permissions.manageable_collections)(user)
            self.context[key] = set(found.values_list("pk", flat=True))
        return self.context[key]

    def get_can_write(self, collection: Collection) -> bool:
        return collection.pk in self._allowed("write")

    def get_can_manage(self, collection: Collection) -> bool:
        return collection.pk in self._allowed("manage")

    def _names(self, collection: Collection, role: str) -> list[str] | None:
        if not self.get_can_manage(collection):
            return None
        attribute = SHARES[role]
        return sorted(client_text(getattr(member, attribute)) for member in getattr(collection, role).all())

    def get_readers(self, collection: Collection) -> list[str] | None:
        return self._names(collection, "readers")

    def get_editors(self, collection: Collection) -> list[str] | None:
        return self._names(collection, "editors")

    def get_reader_groups(self, collection: Collection) -> list[str] | None:
        return self._names(collection, "reader_groups")

    def get_editor_groups(self, collection: Collection) -> list[str] | None:
        return self._names(collection, "editor_groups")

    @extend_schema_field(PendingInvitationOutput(many=True, allow_null=True))
    def get_invitations(self, collection: Collection) -> list[dict] | None:
        if not self.get_can_manage(collection):
            return None
        return PendingInvitationOutput(collection.invitations.all(), many=True).data


class CollectionInput(serializers.ModelSerializer):
    """The fields a caller may set; readers, editors and the groups replace the current lists."""

    # Declared here, so the model's uniqueness check is left to corpus.services (per-field messages).
    slug = serializers.SlugField(required=False, allow_blank=True, max_length=100,
                                 help_text="Default: made from the name.")
    readers = NamesField(required=False, help_text="Usernames who may read it. Someone who neither reads nor "
                                                   "edits it yet is invited (see `invitations`): it is shared "
                                                   "with them once they accept (POST /api/invitations/{id}/accept/).")
    editors = NamesField(required=False, help_text="Usernames who may also add, move, delete and re-ingest "
                                                       "its documents.")
    reader_groups = NamesField(required=False, help_text="Names of groups whose members may read it; a group "
                                                         "not shared yet must be one you belong to.")
    editor_groups = NamesField(required=False, help_text="Names of groups whose members may also add, move, "
                                                              "delete and re-ingest its documents.")

    class Meta:
        model = Collection
        fields = ["name", "slug", *SETTINGS_FIELDS, *SHARES]

    def validate(self, attrs):
        unknown = set(self.initial_data) - set(self.fields) if isinstance(self.initial_data, dict) else set()
        if unknown:
            raise serializers.ValidationError(f"Unknown field(s): {', '.join(sorted(unknown))}.")
        names = {role: attrs[role] for role in SHARES if role in attrs}
        if names:
            try:
                attrs.update(sharing.share_targets(collection=self.context.get("collection"),
                                                   request=self.context["request"], names=names))
            except sharing.ShareThrottled as exc:
                raise Throttled(wait=exc.wait, detail=exc.messages[0]) from None
            except DjangoValidationError as exc:
                raise serializers.ValidationError(exc.message_dict) from exc
        return attrs


def _collections(user):
    return (permissions.readable_collections(user).select_related("owner")
            .prefetch_related(*SHARES, "invitations__user", "invitations__invited_by")
            .annotate(document_count=Count("documents", distinct=True)).order_by("name", "slug"))


def _shown(request: Request, collection: Collection) -> dict:
    return CollectionOutput(_collections(request.user).get(pk=collection.pk), context={"request": request}).data


def _save(collection: Collection | None, request: Request, data: dict) -> Collection:
    """Create (collection None) or update, then share: all or nothing."""
    shares = {role: data.pop(role, None) for role in SHARES}
    if "is_public" in data:
        permissions.check_publish(request.user, was_public=bool(collection and collection.is_public),
                                  is_public=data["is_public"])
    if collection is not None and services.collection_update_rebuilds(collection=collection, **data):
        wait = wait_seconds(CollectionRebuildQuota, request)
        if wait is not None:
            raise Throttled(wait=wait, detail=f"Too many changes of chunk settings (each rebuilds every document); "
                                              f"try again in {wait} seconds.")
    with transaction.atomic():
        if collection is None:
            collection = services.collection_create(owner=request.user, request=request, **data)
        elif data:
            collection = services.collection_update(collection=collection, request=request, **data)
        if any(members is not None for members in shares.values()):
            sharing.collection_share(collection=collection, request=request, **shares)
    return collection


class CollectionListView(APIView):
    pagination_class = LimitOffsetPagination

    @extend_schema(responses={200: CollectionOutput(many=True), **errors(401)}, tags=["collections"],
                   summary="Collections you may read")
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(_collections(request.user), request, view=self)
        return paginator.get_paginated_response(CollectionOutput(page, many=True, context={"request": request}).data)

    @extend_schema(request=CollectionInput, responses={201: CollectionOutput, **errors(400, 401)},
                   tags=["collections"], summary="Create a collection (you own it)")
    def post(self, request: Request) -> Response:
        data = CollectionInput(data=request.data, context={"request": request, "collection": None})
        data.is_valid(raise_exception=True)
        collection = _save(None, request, dict(data.validated_data))
        return Response(_shown(request, collection), status=status.HTTP_201_CREATED)


class CollectionDetailView(APIView):
    @extend_schema(responses={200: CollectionOutput, **errors(401, 404)}, tags=["collections"],
                   summary="One collection")
    def get(self, request: Request, slug: str) -> Response:
        return Response(_shown(request, permissions.collection_for(request.user, slug)))

    @extend_schema(request=CollectionInput(partial=True), responses={200: CollectionOutput,
                                                                    **errors(400, 401, 403, 404, 429)},
                   tags=["collections"], summary="Change or share a collection (owner only)")
    def patch(self, request: Request, slug: str) -> Response:
        collection = permissions.collection_for(request.user, slug, manage=True)
        data = CollectionInput(data=request.data, partial=True, context={"request": request, "collection": collection})
        data.is_valid(raise_exception=True)
        collection = _save(collection, request, dict(data.validated_data))
        return Response(_shown(request, collection))

    @extend_schema(responses={204: None, **errors(401, 403, 404)}, tags=["collections"],
                   summary="Delete a collection with its documents (owner only)")
    def delete(self, request: Request, slug: str) -> Response:
        collection = permissions.collection_for(request.user, slug, manage=True)
        services.collection_delete(collection=collection, request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)
