"""REST API for sources (web pages, sites, server folders a collection keeps in sync): list the
ones of collections you may read, add one (editors of the collection), show, change (schedule,
limits, tags), delete (with the documents it brought), and sync now.

POST /api/sources/{id}/sync/ queues the sync and answers 202 at once with the source's URL to poll
(GET /api/sources/{id}/: `last_sync` holds the counts when `state` is no longer queued or syncing);
no web thread waits for a sync (`manage.py sync_sources --wait` does, in its own process). "Sync now"
is rate-limited per user (sources.quotas). The counts are about the sources' pages and files; their
documents are then processed by the workers as usual.
Permissions: corpus.permissions (a stranger gets 404, a reader 403 on every change); writes go
through sources.services, whose ValidationErrors are 400s naming the field.
"""

from __future__ import annotations

from django.db.models import Count
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.serializers import PlainJSONField, PlainTextField, plain_text
from chat.client_text import client_text
from corpus import permissions
from sources import ownership, services
from sources.models import Source
from sources.quotas import SyncNowQuota


class SourceCountsOutput(serializers.Serializer):
    new = serializers.IntegerField()
    changed = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    removed = serializers.IntegerField()
    failed = serializers.IntegerField()


class SourceFailureOutput(serializers.Serializer):
    item = plain_text("The page's URL or the file's path.")
    reason = plain_text("Often the site's own words (a content type, a redirect's target).")


class SourceLastSyncOutput(SourceCountsOutput):
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    failures = SourceFailureOutput(many=True, help_text="Why items failed (at most 50), and notices such as a "
                                                  "page limit reached.")
    error = plain_text("Why the sync failed as a whole (nothing was removed then).")


class CollectionSourceOutput(serializers.ModelSerializer):
    collection = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by = PlainTextField(source="created_by.username", allow_null=True, default=None)
    # People's words (tags, a reason naming a collection) and addresses: plain text like every API text field.
    url = PlainTextField()
    path = PlainTextField()
    tags = PlainJSONField("Tags given to every document of the source.")
    paused_reason = PlainTextField("Why it does not sync (empty: it does).")
    document_count = serializers.IntegerField(read_only=True)
    last_sync = serializers.SerializerMethodField()

    class Meta:
        model = Source
        fields = ["id", "collection", "kind", "url", "path", "schedule", "max_pages", "max_depth", "tags", "state",
                  "paused_reason", "last_sync", "next_sync_at", "document_count", "created_by", "created_at"]
        read_only_fields = fields

    @extend_schema(responses=SourceLastSyncOutput)
    def get_last_sync(self, source: Source) -> dict:
        # A site's words (content types, URLs from its sitemap) are in them: plain text (chat.client_text).
        failures = [{"item": client_text(f.get("item", "")), "reason": client_text(f.get("reason", ""))}
                    for f in source.failures or []]
        return {"started_at": source.sync_started_at, "finished_at": source.sync_finished_at, **source.counts,
                "failures": failures, "error": client_text(source.error)}


class CollectionSourceInput(serializers.Serializer):
    """Types only; sources.services checks the values (one message per field)."""

    collection = serializers.SlugField(help_text="Slug of a collection you may write to.")
    kind = serializers.CharField(help_text="url (one page), site (a sitemap, or a start URL crawled within its "
                                           "host and path), or folder (under the server's SOURCES_FOLDERS).")
    url = serializers.CharField(required=False, allow_blank=True, help_text="For url and site.")
    path = serializers.CharField(required=False, allow_blank=True,
                                 help_text="For folder: absolute, or relative to an allowed folder.")
    schedule = serializers.CharField(required=False, help_text="none, hourly, daily (default) or weekly.")
    max_pages = serializers.IntegerField(required=False, help_text="Most pages or files kept (default 100).")
    max_depth = serializers.IntegerField(required=False, help_text="Most links followed from the start (site).")
    tags = serializers.JSONField(required=False, help_text="Tags given to every document of the source.")

    def validate(self, attrs):
        unknown = set(self.initial_data) - set(self.fields) if isinstance(self.initial_data, dict) else set()
        if unknown:
            raise serializers.ValidationError(f"Unknown field(s): {', '.join(sorted(unknown))}.")
        return attrs


class CollectionSourceChangeInput(CollectionSourceInput):
    collection = kind = url = path = None


class SourceSyncAccepted(serializers.Serializer):
    state = serializers.CharField(help_text="The source's state now: queued, or syncing when a sync was running.")
    url = serializers.CharField(help_text="The source (GET it to follow the sync; also the Location header).")
    detail = serializers.CharField()


def _sources(user):
    return (Source.objects.filter(collection__in=permissions.readable_collections(user))
            .select_related("collection", "created_by").annotate(document_count=Count("links"))
            .order_by("collection__name", "pk"))


def _shown(source: Source) -> dict:
    return CollectionSourceOutput(Source.objects.annotate(document_count=Count("links")).select_related(
        "collection", "created_by").get(pk=source.pk)).data


class SourceListView(APIView):
    pagination_class = LimitOffsetPagination

    @extend_schema(responses={200: CollectionSourceOutput(many=True), **errors(401)}, tags=["sources"],
                   summary="Sources of the collections you may read")
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(_sources(request.user), request, view=self)
        return paginator.get_paginated_response(CollectionSourceOutput(page, many=True).data)

    @extend_schema(request=CollectionSourceInput, responses={201: CollectionSourceOutput, **errors(400, 401, 403, 404)},
                   tags=["sources"], summary="Add a source to a collection (its first sync is queued)")
    def post(self, request: Request) -> Response:
        data = CollectionSourceInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        collection = permissions.collection_for(request.user, fields.pop("collection"), write=True)
        source = services.source_create(collection=collection, created_by=request.user, request=request, **fields)
        return Response(_shown(source), status=status.HTTP_201_CREATED)


class SourceDetailView(APIView):
    @extend_schema(responses={200: CollectionSourceOutput, **errors(401, 404)}, tags=["sources"], summary="One source")
    def get(self, request: Request, pk: int) -> Response:
        return Response(_shown(permissions.collection_row_for(request.user, Source.objects, pk, noun="source")))

    @extend_schema(request=CollectionSourceChangeInput,
                   responses={200: CollectionSourceOutput, **errors(400, 401, 403, 404)},
                   tags=["sources"], summary="Change a source's schedule, limits or tags")
    def patch(self, request: Request, pk: int) -> Response:
        source = permissions.collection_row_for(request.user, Source.objects, pk, write=True, noun="source")
        data = CollectionSourceInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        return Response(_shown(services.source_update(source=source, request=request, **data.validated_data)))

    @extend_schema(responses={204: None, **errors(401, 403, 404)}, tags=["sources"],
                   summary="Delete a source and the documents it brought")
    def delete(self, request: Request, pk: int) -> Response:
        source = permissions.collection_row_for(request.user, Source.objects, pk, write=True, noun="source")
        services.source_delete(source=source, request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SourceSyncView(APIView):
    throttle_classes = [SyncNowQuota]

    @extend_schema(request=None, responses={202: SourceSyncAccepted, **errors(401, 403, 404, 429)},
                   tags=["sources"], summary="Queue a sync of a source now; poll the source for its counts")
    def post(self, request: Request, pk: int) -> Response:
        source = permissions.collection_row_for(request.user, Source.objects, pk, write=True, noun="source")
        services.source_sync_enqueue(source=source)
        url = reverse("source", kwargs={"pk": source.pk})
        state = Source.objects.filter(pk=source.pk).values_list("state", flat=True).first() or "deleted"
        return Response({"state": state, "url": url,
                         "detail": "The sync is queued (or already running); GET the source's url until its state "
                                   "is no longer queued or syncing: last_sync then holds the counts."},
                        status=status.HTTP_202_ACCEPTED, headers={"Location": url})


class SourceTakeOverView(APIView):
    @extend_schema(request=None, responses={200: CollectionSourceOutput, **errors(401, 403, 404)}, tags=["sources"],
                   summary="Take a source over: it syncs in your name from now on (and resumes if it was paused "
                           "because its owner lost write access)")
    def post(self, request: Request, pk: int) -> Response:
        source = permissions.collection_row_for(request.user, Source.objects, pk, write=True, noun="source")
        ownership.source_take_over(source=source, user=request.user, request=request)
        return Response(_shown(source))
