"""POST /api/search/: hybrid search over the caller's readable collections (DESIGN.md "Contracts").

Unknown and unreadable collections both answer 404, so the API does not reveal which
collections exist (the same choice as /api/ask/)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chat.retrieval.rse import PRESETS
from chat.retrieval.search import MAX_K, MAX_MAX_CHARS, MAX_QUERY_CHARS, MIN_MAX_CHARS, SearchError, search
from corpus.permissions import readable_collections

API_MODES = ["hybrid", "vector", "keyword"]


class StrictCharField(serializers.CharField):
    """A string and nothing else (DRF would turn 5 into "5")."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer and nothing else (DRF would accept "5", 5.0 and true)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


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

    def validate(self, attrs):
        unknown = set(self.initial_data) - set(self.fields) if isinstance(self.initial_data, dict) else set()
        if unknown:
            raise serializers.ValidationError(f"Unknown field(s): {', '.join(sorted(unknown))}.")
        return attrs


class SearchDocumentOutput(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    source = serializers.CharField()


class SearchRanksOutput(serializers.Serializer):
    vector = serializers.IntegerField(allow_null=True)
    keyword = serializers.IntegerField(allow_null=True)


class SearchChunkOutput(serializers.Serializer):
    chunk_id = serializers.IntegerField()
    document = SearchDocumentOutput()
    chunk_index = serializers.IntegerField()
    text = serializers.CharField()
    start = serializers.IntegerField(help_text="Character offset in the document text.")
    end = serializers.IntegerField(help_text="Character offset, exclusive.")
    score = serializers.FloatField(
        help_text="Hybrid: the fused score (0-1, a weighted average of the min-max normalised similarity and BM25 "
                  "over the candidates; the RRF score when the server runs SEARCH_FUSION=rrf; with several queries, "
                  "1 / (60 + the chunk's best rank)); vector: cosine similarity; keyword: BM25.")
    relevance = serializers.FloatField(help_text="Calibrated 0-1 relevance used by RSE.")
    ranks = SearchRanksOutput()


class SearchSegmentOutput(serializers.Serializer):
    document = SearchDocumentOutput()
    start = serializers.IntegerField(help_text="First chunk index.")
    end = serializers.IntegerField(help_text="Chunk index after the segment (exclusive).")
    char_start = serializers.IntegerField()
    char_end = serializers.IntegerField()
    text = serializers.CharField()
    score = serializers.FloatField()
    page = serializers.IntegerField(allow_null=True)


class SearchOutput(serializers.Serializer):
    query = serializers.CharField()
    mode = serializers.CharField()
    chunks = SearchChunkOutput(many=True)
    segments = SearchSegmentOutput(many=True)
    timings_ms = serializers.DictField(
        child=serializers.FloatField(),
        help_text="Milliseconds per stage: embed, candidates, fusion, rerank (when on), rse (or text without RSE) "
                  "and total.")


class SearchView(APIView):
    @extend_schema(request=SearchInput, responses=SearchOutput, summary="Hybrid search with RSE segments")
    def post(self, request: Request) -> Response:
        if not isinstance(request.data, dict):
            raise ApiValidationError({"detail": "The body must be a JSON object."})
        params = SearchInput(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        collections = readable_collections(request.user)
        if data.get("collection"):
            collections = collections.filter(slug=data["collection"])
            if not collections.exists():
                raise NotFound(f"There is no collection {data['collection']!r} that you may read.")
        try:
            result = search(query=data["query"], collections=collections, mode=data["mode"], k=data["k"],
                            rse=data["rse"], max_chars=data["max_chars"])
        except SearchError as exc:
            raise ApiValidationError({"detail": str(exc)}) from exc
        return Response(SearchOutput(result).data)
