"""REST API for documents: list, upload, show, delete, re-ingest. Thin views over corpus.services;
every permission decision comes from corpus.permissions."""

from __future__ import annotations

from pathlib import PurePosixPath

from django.db.models import Count
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from corpus import permissions, services, uploads
from corpus.models import Document


class DocumentOutput(serializers.ModelSerializer):
    collection = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    chunk_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Document
        fields = ["id", "collection", "title", "source", "media_type", "content_hash", "status", "progress_done",
                  "progress_total", "error", "chunk_count", "summary", "created_at", "updated_at", "ingested_at"]
        read_only_fields = fields


class DocumentUploadInput(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=False)
    collection = serializers.SlugField(help_text="Slug of a collection you may write to.")
    source = serializers.CharField(required=False, max_length=1024,
                                   help_text="Defaults to the file name; uploading the same source again updates it.")

    def validate_file(self, upload):
        error = services.size_error(upload.size)
        if error:
            raise serializers.ValidationError(error)
        suffix = PurePosixPath(upload.name or "").suffix.lower()
        if suffix not in uploads.SUPPORTED_EXTENSIONS:
            raise serializers.ValidationError(
                f"Unsupported file type {suffix or '(none)'!r}; supported: "
                f"{', '.join(sorted(uploads.SUPPORTED_EXTENSIONS))}.")
        return upload


class DocumentListQuery(serializers.Serializer):
    collection = serializers.SlugField(required=False)
    status = serializers.ChoiceField(choices=Document.Status.choices, required=False)


def _documents_for(user):
    return (permissions.readable_documents(user).select_related("collection")
            .annotate(chunk_count=Count("chunks")).order_by("collection__slug", "source"))


def _with_counts(request: Request, document: Document) -> Document:
    return _documents_for(request.user).get(pk=document.pk)


class DocumentListView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(parameters=[DocumentListQuery], responses=DocumentOutput(many=True),
                   summary="Documents you may read")
    def get(self, request: Request) -> Response:
        query = DocumentListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        documents = _documents_for(request.user)
        if "collection" in query.validated_data:
            documents = documents.filter(collection__slug=query.validated_data["collection"])
        if "status" in query.validated_data:
            documents = documents.filter(status=query.validated_data["status"])
        paginator = api_settings.DEFAULT_PAGINATION_CLASS()
        page = paginator.paginate_queryset(documents, request, view=self)
        return paginator.get_paginated_response(DocumentOutput(page, many=True).data)

    @extend_schema(request={"multipart/form-data": DocumentUploadInput}, responses={201: DocumentOutput},
                   summary="Upload a document (queued for ingestion)")
    def post(self, request: Request) -> Response:
        data = DocumentUploadInput(data=request.data)
        data.is_valid(raise_exception=True)
        collection = permissions.collection_for(request.user, data.validated_data["collection"], write=True)
        upload = data.validated_data["file"]
        document = services.document_ingest(
            collection=collection, source=data.validated_data.get("source") or upload.name, data=upload.read(),
            filename=upload.name, uploaded_by=request.user)
        document = _with_counts(request, document)
        return Response(DocumentOutput(document).data, status=status.HTTP_201_CREATED)


class DocumentDetailView(APIView):
    @extend_schema(responses=DocumentOutput, summary="One document")
    def get(self, request: Request, pk: int) -> Response:
        document = permissions.document_for(request.user, pk)
        return Response(DocumentOutput(_with_counts(request, document)).data)

    @extend_schema(responses={204: None}, summary="Delete a document, its chunks and its file")
    def delete(self, request: Request, pk: int) -> Response:
        document = permissions.document_for(request.user, pk, write=True)
        services.document_delete(document=document)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DocumentReingestView(APIView):
    @extend_schema(request=None, responses={202: DocumentOutput},
                   parameters=[OpenApiParameter("force", bool, description="Rebuild even if up to date.")],
                   summary="Process a document again")
    def post(self, request: Request, pk: int) -> Response:
        document = permissions.document_for(request.user, pk, write=True)
        force = request.query_params.get("force", "").lower() in {"1", "true", "yes"}
        services.document_reingest(document=document, force=force)
        return Response(DocumentOutput(_with_counts(request, document)).data, status=status.HTTP_202_ACCEPTED)
