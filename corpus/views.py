"""Documents page: upload, watch ingestion status live, re-ingest and delete.

Every read and write goes through corpus.permissions, like the API and the admin."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from corpus import permissions, services
from corpus.forms import CollectionForm, UploadForm
from corpus.models import Document

_IN_PROGRESS = [s for s in Document.Status.values if s not in (Document.Status.READY, Document.Status.FAILED)]


def _documents(request: HttpRequest, collection_slug: str | None):
    documents = (permissions.readable_documents(request.user).select_related("collection")
                 .annotate(chunk_count=Count("chunks")).order_by("collection__name", "source"))
    if collection_slug:
        documents = documents.filter(collection__slug=collection_slug)
    return documents


@require_GET
@login_required
def document_list(request: HttpRequest) -> HttpResponse:
    slug = request.GET.get("collection") or None
    documents = _documents(request, slug)
    context = {
        "documents": documents,
        "collections": permissions.readable_collections(request.user),
        "writable": permissions.writable_collections(request.user),
        "selected": slug,
        "in_progress": documents.filter(status__in=_IN_PROGRESS).exists(),
        "upload_form": UploadForm(collections=permissions.writable_collections(request.user)),
        "collection_form": CollectionForm(),
    }
    if request.htmx:
        return render(request, "corpus/documents.html#document-table", context)
    return render(request, "corpus/documents.html", context)


@require_POST
@login_required
def document_upload(request: HttpRequest) -> HttpResponse:
    form = UploadForm(request.POST, request.FILES, collections=permissions.writable_collections(request.user))
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return redirect("corpus:documents")
    collection = form.cleaned_data["collection"]
    for upload in form.cleaned_data["files"]:
        services.document_ingest(collection=collection, source=upload.name, data=upload.read(),
                                 filename=upload.name, uploaded_by=request.user)
    messages.success(request, f"Queued {len(form.cleaned_data['files'])} file(s) into {collection.name}.")
    return redirect(f"{reverse('corpus:documents')}?collection={collection.slug}")


def _writable_document(request: HttpRequest, pk: int) -> Document:
    document = get_object_or_404(permissions.readable_documents(request.user), pk=pk)
    if not permissions.can_write_document(request.user, document):
        raise Http404("No such document.")  # readers learn nothing about write access
    return document


@require_POST
@login_required
def document_reingest(request: HttpRequest, pk: int) -> HttpResponse:
    document = _writable_document(request, pk)
    services.document_reingest(document=document, force=True)
    messages.success(request, f"Re-ingesting {document}.")
    return redirect("corpus:documents")


@require_POST
@login_required
def document_delete(request: HttpRequest, pk: int) -> HttpResponse:
    document = _writable_document(request, pk)
    name = str(document)
    services.document_delete(document=document)
    messages.success(request, f"Deleted {name}.")
    return redirect("corpus:documents")


@require_POST
@login_required
def collection_create(request: HttpRequest) -> HttpResponse:
    form = CollectionForm(request.POST)
    if not form.is_valid():
        for field, errors in form.errors.items():
            for error in errors:
                messages.error(request, f"{field}: {error}")
        return redirect("corpus:documents")
    collection = services.collection_create(owner=request.user, **form.cleaned_data)
    messages.success(request, f"Created the collection {collection.name}.")
    return redirect(f"{reverse('corpus:documents')}?collection={collection.slug}")
