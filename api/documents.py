"""REST API for documents: list (filters, pagination), upload one or many files (a result per
file), show, move, delete, re-ingest, and a document's chunks. Thin views: reads through
corpus.selectors, writes through corpus.services, every permission decision through
corpus.permissions (collection_for / document_for; their Denied becomes 404/403 in api.errors)."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import BooleanField, ExpressionWrapper, Q
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import Throttled
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.quotas import wait_seconds
from api.errors import errors
from api.parsers import SafeJSONParser
from api.serializers import PlainJSONField, PlainTextField
from corpus import permissions, selectors, services
from corpus.metadata import TAG_MAX_CHARS, TAGS_MAX, clean_tags
from corpus.models import Chunk, Document
from corpus.quotas import ForcedReingestQuota, move_rebuild_wait
from corpus.uploads import SUPPORTED_EXTENSIONS, limit_text


class DocumentOutput(serializers.ModelSerializer):
    collection = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    chunk_count = serializers.IntegerField(read_only=True)
    # A document's own words (its title, an uploader's file name, a site's content type) may hold
    # markup: plain text, the rule of every API text field (chat.client_text).
    title = PlainTextField()
    source = PlainTextField("Path relative to the ingested folder, file name or URL.")
    media_type = PlainTextField()
    metadata = PlainJSONField("source_kind, url or path, media_type, title, author, created, modified (ISO 8601, "
                              "UTC) and tags; filled at ingestion, tags set with PATCH.")
    error = PlainTextField("Why the document failed, for a person (empty otherwise).")
    summary = PlainTextField("AutoContext summary (LLM).")

    class Meta:
        model = Document
        fields = ["id", "collection", "title", "source", "media_type", "metadata", "content_hash", "status",
                  "progress_done", "progress_total", "error", "chunk_count", "summary", "created_at", "updated_at",
                  "ingested_at"]
        read_only_fields = fields
        extra_kwargs = {"status": {"help_text": "queued → parsing → chunking → contextualizing → embedding → "
                                                "ready | failed"},
                        "progress_done": {"help_text": "Work done in the current stage, of progress_total: scanned "
                                                       "pages read by OCR while parsing, chunks while embedding."},
}


class DocumentListQuery(serializers.Serializer):
    collection = serializers.SlugField(required=False, help_text="Only this collection's documents.")
    status = serializers.ChoiceField(choices=Document.Status.choices, required=False)
    search = serializers.CharField(required=False, max_length=200,
                                   help_text="Words that must all appear in the title or the source.")


class DocumentUploadInput(serializers.Serializer):
    # Empty files pass here: corpus.services.document_upload refuses them with the one upload rule.
    files = serializers.ListField(
        child=serializers.FileField(allow_empty_file=True), required=False,
        help_text=f"One or more files (repeat the field). Supported: {', '.join(sorted(SUPPORTED_EXTENSIONS))}; "
                  f"at most {limit_text()} each.")
    file = serializers.FileField(required=False, allow_empty_file=True,
                                 help_text="One file (the same as one `files`).")
    collection = serializers.SlugField(help_text="Slug of a collection you may write to.")
    source = serializers.CharField(required=False, max_length=1024,
                                   help_text="With one file: its source (default: the file name). Uploading the "
                                             "same source again updates that document.")


class UploadedFileOutput(serializers.Serializer):
    name = PlainTextField("The file's name (or the source given).")
    accepted = serializers.BooleanField()
    document = DocumentOutput(allow_null=True, help_text="The document it created or updated (queued).")
    error = PlainTextField("Why the file was refused, naming it.", allow_null=True)


class UploadOutput(serializers.Serializer):
    accepted = serializers.IntegerField(help_text="How many files were queued for ingestion.")
    refused = serializers.IntegerField(help_text="How many files were refused (see their `error`).")
    files = UploadedFileOutput(many=True, help_text="One entry per file, in the order sent.")


class DocumentMoveInput(serializers.Serializer):
    collection = serializers.SlugField(help_text="Slug of the collection to move the document to (you must be "
                                                 "able to write to both).")


class DocumentPatchInput(serializers.Serializer):
    collection = serializers.SlugField(required=False, help_text="Move the document to this collection (you must "
                                                                 "be able to write to both).")
    tags = serializers.JSONField(required=False, help_text=f"Replace the document's tags: a list of at most "
                                                           f"{TAGS_MAX} strings of at most {TAG_MAX_CHARS} "
                                                           f"characters.")

    def validate(self, attrs):
        unknown = set(self.initial_data) - set(self.fields) if isinstance(self.initial_data, dict) else set()
        if unknown:
            raise serializers.ValidationError(f"Unknown field(s): {', '.join(sorted(unknown))}.")
        if not attrs:
            raise serializers.ValidationError("Send `tags`, `collection` or both.")
        if "tags" in attrs:
            try:
                attrs["tags"] = clean_tags(attrs["tags"])
            except DjangoValidationError as exc:
                raise serializers.ValidationError({"tags": exc.messages}) from exc
        return attrs


class ReingestInput(serializers.Serializer):
    force = serializers.BooleanField(default=False, help_text="Rebuild even if the chunks are up to date.")


class ChunkOutput(serializers.ModelSerializer):
    embedded = serializers.BooleanField(read_only=True, help_text="Whether the chunk has its vector yet.")
    text = PlainTextField("The chunk's text (start and end are offsets of the text before escaping).")
    heading_path = PlainTextField("Headings above the chunk, joined with ' > '.")
    context = PlainTextField("The header or LLM-written context used for indexing.")

    class Meta:
        model = Chunk
        fields = ["id", "chunk_index", "text", "start", "end", "heading_path", "context", "page", "token_count",
                  "embedded"]
        read_only_fields = fields
        extra_kwargs = {"start": {"help_text": "Character offset in the document text."},
                        "end": {"help_text": "Character offset, exclusive."}}


def _shown(user, document: Document) -> Document:
    """`document` as the list shows it (chunk count, collection); DocumentGone if deleted meanwhile."""
    shown = selectors.document_list(user=user).filter(pk=document.pk).first()
    if shown is None:
        raise services.DocumentGone(document.pk)
    return shown


def _paginate(view: APIView, request: Request, queryset, serializer_class) -> Response:
    paginator = view.pagination_class()
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)


class DocumentListView(APIView):
    parser_classes = [MultiPartParser, FormParser]
    pagination_class = LimitOffsetPagination

    @extend_schema(parameters=[DocumentListQuery], responses={200: DocumentOutput(many=True), **errors(400, 401, 404)},
                   summary="Documents you may read, newest first", tags=["documents"])
    def get(self, request: Request) -> Response:
        query = DocumentListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        collection = permissions.collection_for(request.user, params["collection"]) if "collection" in params else None
        documents = selectors.document_list(user=request.user, collection=collection, status=params.get("status"),
                                            search=params.get("search"))
        return _paginate(self, request, documents, DocumentOutput)

    @extend_schema(
        request={"multipart/form-data": DocumentUploadInput},
        responses={
            201: OpenApiResponse(UploadOutput, description="Every file was accepted and queued for ingestion."),
            207: OpenApiResponse(UploadOutput, description="Some files were refused (see each `error`); the "
                                                           "others were queued."),
            400: OpenApiResponse({"oneOf": [{"$ref": "#/components/schemas/UploadOutput"},
                                            errors(400)[400].response]},
                                 description="Every file was refused (per-file body), or the request itself is "
                                             "wrong (no file, no collection)."),
            **errors(401, 403, 404)},
        summary="Upload one or many files (queued for ingestion)", tags=["documents"])
    def post(self, request: Request) -> Response:
        data = DocumentUploadInput(data=request.data)
        data.is_valid(raise_exception=True)
        files = request.FILES.getlist("files") + request.FILES.getlist("file")
        if not files:
            raise serializers.ValidationError({"files": ["Send at least one file (field `files`, or `file`)."]})
        source = data.validated_data.get("source")
        if source and len(files) > 1:
            raise serializers.ValidationError({"source": ["A source can only be given with a single file."]})
        collection = permissions.collection_for(request.user, data.validated_data["collection"], write=True)
        if source:
            results = [services.document_upload(collection=collection, file=files[0], source=source,
                                                uploaded_by=request.user)]
        else:
            results = services.documents_upload(collection=collection, files=files, uploaded_by=request.user)
        accepted = sum(result.accepted for result in results)
        body = {"accepted": accepted, "refused": len(results) - accepted, "files": [
            {"name": r.name, "accepted": r.accepted, "error": r.error,
             "document": _shown(request.user, r.document) if r.document else None} for r in results]}
        code = (status.HTTP_201_CREATED if accepted == len(results)
                else status.HTTP_207_MULTI_STATUS if accepted else status.HTTP_400_BAD_REQUEST)
        return Response(UploadOutput(body).data, status=code)


class DocumentDetailView(APIView):
    parser_classes = [SafeJSONParser, FormParser, MultiPartParser]

    @extend_schema(responses={200: DocumentOutput, **errors(401, 404)}, summary="One document, with its status, "
                   "progress and error", tags=["documents"])
    def get(self, request: Request, pk: int) -> Response:
        return Response(DocumentOutput(_shown(request.user, permissions.document_for(request.user, pk))).data)

    @extend_schema(request=DocumentPatchInput, responses={200: DocumentOutput, **errors(400, 401, 403, 404, 429)},
                   summary="Set a document's tags and/or move it to another collection", tags=["documents"])
    def patch(self, request: Request, pk: int) -> Response:
        document = permissions.document_for(request.user, pk, write=True)
        if not isinstance(request.data, dict):
            raise serializers.ValidationError({"detail": "The body must be a JSON object."})
        data = DocumentPatchInput(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        target = permissions.collection_for(request.user, params["collection"]) if "collection" in params else None
        if target is not None:
            permissions.check_move(request.user, document, target)
            _charge_rebuild(request, document, target)
        if "tags" in params:
            services.document_set_tags(document=document, tags=params["tags"])
        if target is not None:
            services.document_move(document=document, collection=target, request=request)
        return Response(DocumentOutput(_shown(request.user, document)).data)

    @extend_schema(responses={204: None, **errors(401, 403, 404)},
                   summary="Delete a document, its chunks and its file", tags=["documents"])
    def delete(self, request: Request, pk: int) -> Response:
        document = permissions.document_for(request.user, pk, write=True)
        services.document_delete(document=document, request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DocumentMoveView(APIView):
    @extend_schema(request=DocumentMoveInput, responses={200: DocumentOutput, **errors(400, 401, 403, 404, 429)},
                   summary="Move a document to another collection", tags=["documents"])
    def post(self, request: Request, pk: int) -> Response:
        return _move(request, pk)


def _move(request: Request, pk: int) -> Response:
    """The right to delete the document where it is and write access to the target
    (permissions.check_move); a clash of sources is a 400."""
    document = permissions.document_for(request.user, pk)
    data = DocumentMoveInput(data=request.data)
    data.is_valid(raise_exception=True)
    target = permissions.collection_for(request.user, data.validated_data["collection"])
    permissions.check_move(request.user, document, target)
    _charge_rebuild(request, document, target)
    services.document_move(document=document, collection=target, request=request)
    return Response(DocumentOutput(_shown(request.user, document)).data)


def _charge_rebuild(request: Request, document: Document, target) -> None:
    """Throttled (429) when the move would rebuild the document past the user's budget
    (corpus.quotas.move_rebuild_wait)."""
    wait = move_rebuild_wait(request, document=document, collection=target)
    if wait is not None:
        raise Throttled(wait=wait, detail=f"Too many rebuilds (a move into a collection with other chunk "
                                          f"settings rebuilds the document); try again in {wait} seconds.")


class DocumentReingestView(APIView):
    @extend_schema(request=ReingestInput, responses={202: DocumentOutput, **errors(400, 401, 403, 404, 429)},
                   parameters=[OpenApiParameter("force", bool, description="Rebuild even if up to date (or "
                                                                           "`force` in the body).")],
                   summary="Process a document again", tags=["documents"])
    def post(self, request: Request, pk: int) -> Response:
        document = permissions.document_for(request.user, pk, write=True)
        body = ReingestInput(data=request.data if isinstance(request.data, dict) else {})
        body.is_valid(raise_exception=True)
        force = body.validated_data["force"] or request.query_params.get("force", "").lower() in {"1", "true", "yes"}
        if force:
            wait = wait_seconds(ForcedReingestQuota, request)
            if wait is not None:
                raise Throttled(wait=wait, detail=f"Too many forced re-ingests; try again in {wait} seconds.")
        services.document_reingest(document=document, force=force)
        return Response(DocumentOutput(_shown(request.user, document)).data, status=status.HTTP_202_ACCEPTED)


class DocumentChunksView(APIView):
    pagination_class = LimitOffsetPagination

    @extend_schema(responses={200: ChunkOutput(many=True), **errors(401, 404)}, tags=["documents"],
                   summary="A document's chunks in order: text, offsets, context, whether embedded")
    def get(self, request: Request, pk: int) -> Response:
        document = permissions.document_for(request.user, pk)
        chunks = (Chunk.objects.filter(document=document).order_by("chunk_index")
                  .only("id", "chunk_index", "text", "start", "end", "heading_path", "context", "page", "token_count")
                  .annotate(embedded=ExpressionWrapper(Q(embedding__isnull=False), output_field=BooleanField())))
        return _paginate(self, request, chunks, ChunkOutput)
