"""POST /api/search/: hybrid search over the caller's readable collections (DESIGN.md "Contracts").

Unknown and unreadable collections both answer 404 (corpus.permissions.collection_for), so the
API does not reveal which collections exist."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.serializers import FiltersField, ScoredChunkOutput, SegmentOutput, StrictCharField, StrictIntegerField
from chat.retrieval.filters import NO_FILTERS
from chat.retrieval.payload import search_payload
from chat.retrieval.rse import PRESETS
from chat.retrieval.search import MAX_K, MAX_MAX_CHARS, MAX_QUERY_CHARS, MIN_MAX_CHARS, SearchError, search
from chat.throttles import SearchThrottle
from corpus.models import Collection
from corpus.permissions import collection_for, readable_collections

API_MODES = ["hybrid", "vector", "keyword"]


class SearchInput(serializers.Serializer):
    query = StrictCharField(max_length=MAX_QUERY_CHARS, error_messages={
        "blank": "The query is empty.", "invalid": "The query must be a string."})
    collection = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=100,
                                 help_text="Slug of one collection to search (default: all you may read).")
    mode = serializers.ChoiceField(choices=API_MODES, default="hybrid",
                                   error_messages={"invalid_choice": f"mode must be one of {', '.join(API_MODES)}."})
    k = StrictIntegerField(default=10, min_value=1, max_value=MAX_K, error_messages={
        "invalid": "k must be an integer.", "min_value": f"k must be from 1 to {MAX_K}.",
        "max_value": f"k must be from 1 to {MAX_K}."})
    rse = serializers.ChoiceField(choices=list(PRESETS), default="balanced", allow_null=True, error_messages={
        "invalid_choice": f"rse must be one of {', '.join(PRESETS)} or null."})
    max_chars = StrictIntegerField(
        required=False, allow_null=True, default=None, min_value=MIN_MAX_CHARS, max_value=MAX_MAX_CHARS,
        error_messages={"invalid": "max_chars must be an integer or null.",
                        "min_value": f"max_chars must be from {MIN_MAX_CHARS} to {MAX_MAX_CHARS}.",
                        "max_value": f"max_chars must be from {MIN_MAX_CHARS} to {MAX_MAX_CHARS}."},
        help_text="Your context budget in characters: the RSE segments are trimmed to fit it, each around its "
                  "most relevant chunks, rather than leaving you to cut after a long first segment; the returned "
                  "chunks they lack take part.")
    filters = FiltersField()

    def validate(self, attrs):
        unknown = set(self.initial_data) - set(self.fields) if isinstance(self.initial_data, dict) else set()
        if unknown:
            raise serializers.ValidationError(f"Unknown field(s): {', '.join(sorted(unknown))}.")
        return attrs


class SearchOutput(serializers.Serializer):
    """The schema of chat.retrieval.payload.search_payload, which builds the body (MCP's search too)."""

    query = serializers.CharField()
    mode = serializers.CharField()
    chunks = ScoredChunkOutput(many=True, help_text="Best first.")
    segments = SegmentOutput(many=True, help_text="RSE segments, most valuable first (empty without RSE).")
    timings_ms = serializers.DictField(
        child=serializers.FloatField(),
        help_text="Milliseconds per stage: embed, candidates, fusion, rerank (when on), rse (or text without RSE) "
                  "and total.")


class SearchView(APIView):
    read_like = True  # a POST that only reads: read-only tokens may use it (accounts.permissions)
    throttle_classes = [SearchThrottle]

    @extend_schema(request=SearchInput, responses={200: SearchOutput, **errors(400, 401, 404, 429)},
                   summary="Hybrid search with RSE segments", tags=["search"])
    def post(self, request: Request) -> Response:
        if not isinstance(request.data, dict):
            raise ApiValidationError({"detail": "The body must be a JSON object."})
        params = SearchInput(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        if data.get("collection"):
            collections = Collection.objects.filter(pk=collection_for(request.user, data["collection"]).pk)
        else:
            collections = readable_collections(request.user)
        try:
            result = search(query=data["query"], collections=collections, mode=data["mode"], k=data["k"],
                            rse=data["rse"], max_chars=data["max_chars"], filters=data.get("filters", NO_FILTERS))
        except SearchError as exc:
            raise ApiValidationError({"detail": str(exc)}) from exc
        return Response(search_payload(result))
