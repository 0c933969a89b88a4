"""Documents page (upload, live ingestion status, re-ingest, delete) and collection pages (create,
edit, share, delete).

Every read and write goes through corpus.permissions, like the API and the admin; writes go
through corpus.services and the document list through corpus.selectors. The page's filters
(collection, status, search, page) travel in the query string of every form and redirect, so an
action brings you back to the list you were looking at.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.quotas import wait_seconds
from corpus import permissions, selectors, services, sharing
from corpus.forms import CollectionForm, DocumentFilterForm, ShareForm, UploadForm
from corpus.models import Collection, Document
from corpus.quotas import CollectionRebuildQuota, ForcedReingestQuota

PAGE_SIZE = 100
_FINISHED = (Document.Status.READY, Document.Status.FAILED)


def _collection(request: HttpRequest, slug: str, **access) -> Collection:
    try:
        return permissions.collection_for(request.user, slug, **access)
    except permissions.Denied as denied:
        raise denied.http_error() from None


def _document(request: HttpRequest, pk: int) -> Document:
    try:
        return permissions.document_for(request.user, pk, write=True)
    except permissions.Denied as denied:
        raise denied.http_error() from None


def _filters(request: HttpRequest) -> dict:
    return DocumentFilterForm(request.GET).filters()


def _documents_url(filters: dict) -> str:
    url = reverse("corpus:documents")
    return f"{url}?{urlencode(filters)}" if filters else url


@require_GET
@login_required
def document_list(request: HttpRequest) -> HttpResponse:
    filters = _filters(request)
    collection = _collection(request, filters["collection"]) if "collection" in filters else None
    documents = selectors.document_list(user=request.user, collection=collection, status=filters.get("status"),
                                        search=filters.get("q"))
    page = Paginator(documents, PAGE_SIZE).get_page(filters.get("page"))
    writable = permissions.writable_collections(request.user)
    context = {
        "page": page,
        "documents": page.object_list,
        "filters": filters,
        "query": urlencode(filters),
        "list_query": urlencode({name: value for name, value in filters.items() if name != "page"}),
        "collection": collection,
        "in_progress": any(d.status not in _FINISHED for d in page.object_list),
        "writable_ids": set(writable.values_list("pk", flat=True)),
        "manageable_ids": set(permissions.manageable_collections(request.user).values_list("pk", flat=True)),
    }
    if request.htmx:
        return render(request, "corpus/documents.html#document-table", context)
    context["invitations"] = sharing.invitations_pending(user=request.user)
    upload_target = selectors.upload_target(user=request.user, viewing=collection)
    context |= {
        "collections": permissions.readable_collections(request.user),
        "filter_form": DocumentFilterForm(initial=filters),
        "upload_form": UploadForm(collections=writable, initial={"collection": upload_target}),
        "upload_elsewhere": collection is not None and upload_target is None,
        "collection_form": CollectionForm(user=request.user),
    }
    return render(request, "corpus/documents.html", context)


@require_POST
@login_required
def document_upload(request: HttpRequest) -> HttpResponse:
    filters = _filters(request)
    form = UploadForm(request.POST, request.FILES, collections=permissions.writable_collections(request.user))
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return redirect(_documents_url(filters))
    collection = form.cleaned_data["collection"]
    results = services.documents_upload(collection=collection, files=form.cleaned_data["files"],
                                        uploaded_by=request.user)
    accepted = [result.name for result in results if result.accepted]
    if accepted:
        messages.success(request, f"Added to {collection.name} (queued for ingestion): {', '.join(accepted)}.")
    for result in results:
        if not result.accepted:
            messages.error(request, result.error)
    if filters.get("collection", collection.slug) != collection.slug:
        filters["collection"] = collection.slug  # show where the files went
    filters.pop("page", None)  # new documents come first
    return redirect(_documents_url(filters))


@require_POST
@login_required
def document_reingest(request: HttpRequest, pk: int) -> HttpResponse:
    document = _document(request, pk)
    wait = wait_seconds(ForcedReingestQuota, request)
    if wait is not None:
        messages.error(request, f"You re-ingested many documents lately; try again in {wait} seconds.")
        return redirect(_documents_url(_filters(request)))
    try:
        services.document_reingest(document=document, force=True)
    except services.DocumentGone:
        messages.error(request, f"{document} has just been deleted.")
    else:
        messages.success(request, f"Re-ingesting {document}.")
    return redirect(_documents_url(_filters(request)))


@require_POST
@login_required
def document_delete(request: HttpRequest, pk: int) -> HttpResponse:
    document = _document(request, pk)
    name = str(document)
    services.document_delete(document=document, request=request)
    messages.success(request, f"Deleted {name}.")
    return redirect(_documents_url(_filters(request)))


@require_http_methods(["GET", "POST"])
@login_required
def collection_create(request: HttpRequest) -> HttpResponse:
    form = CollectionForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            collection = services.collection_create(owner=request.user, request=request, **form.cleaned_data)
        except ValidationError as exc:  # e.g. the slug was taken meanwhile
            form.add_error(None, exc)
        else:
            messages.success(request, f"Created the collection {collection.name}.")
            return redirect(_documents_url({"collection": collection.slug}))
    status = 400 if form.is_bound else 200
    return render(request, "corpus/collection_new.html", {"form": form}, status=status)


@require_http_methods(["GET", "POST"])
@login_required
def collection_settings(request: HttpRequest, slug: str) -> HttpResponse:
    """Edit a collection (owners): name, slug, description and ingestion settings."""
    collection = _collection(request, slug, manage=True)
    # The form writes the typed values onto its instance; the real change goes through the service.
    form = CollectionForm(request.POST or None, instance=Collection.objects.get(pk=collection.pk),
                          user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            if services.collection_update_rebuilds(collection=collection, **form.cleaned_data):
                wait = wait_seconds(CollectionRebuildQuota, request)
                if wait is not None:
                    raise ValidationError(f"You changed chunk settings many times lately (each change rebuilds "
                                          f"every document); try again in {wait} seconds.", code="throttled")
            services.collection_update(collection=collection, request=request, **form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, f"Saved the collection {collection.name}.")
            return redirect("corpus:collection", slug=collection.slug)
    return _settings_page(request, collection, form=form, share_form=ShareForm.for_collection(collection))


@require_POST
@login_required
def collection_share(request: HttpRequest, slug: str) -> HttpResponse:
    collection = _collection(request, slug, manage=True)
    form = ShareForm(request.POST, collection=collection, request=request)
    if form.is_valid():
        try:
            sharing.collection_share(collection=collection, request=request, **form.cleaned_data)
        except ValidationError as exc:  # past a cap on invitations, a declined one (corpus.sharing)
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, f"Saved who may use {collection.name}. Anyone new is invited: it is shared "
                                      "with them once they accept.")
            return redirect("corpus:collection", slug=collection.slug)
    return _settings_page(request, collection, form=CollectionForm(instance=collection, user=request.user),
                          share_form=form)


def _settings_page(request: HttpRequest, collection: Collection, *, form, share_form) -> HttpResponse:
    status = 400 if (form.is_bound and form.errors) or (share_form.is_bound and share_form.errors) else 200
    return render(request, "corpus/collection_settings.html",
                  {"collection": collection, "form": form, "share_form": share_form,
                   "invitations": collection.invitations.select_related("user", "invited_by"),
                   "document_count": collection.documents.count()}, status=status)


@require_http_methods(["GET", "POST"])
@login_required
def collection_delete(request: HttpRequest, slug: str) -> HttpResponse:
    """GET asks for confirmation; POST deletes the collection with its documents and files."""
    collection = _collection(request, slug, manage=True)
    if request.method == "POST":
        name = collection.name
        services.collection_delete(collection=collection, request=request)
        messages.success(request, f"Deleted the collection {name} and its documents.")
        return redirect("corpus:documents")
    return render(request, "corpus/collection_delete.html",
                  {"collection": collection, "document_count": collection.documents.count()})


@require_POST
@login_required
def invitation_answer(request: HttpRequest, pk: int, answer: str) -> HttpResponse:
    """Accept or decline one of your share invitations (corpus.sharing)."""
    try:
        invitation = permissions.invitation_for(request.user, pk)
        if answer == "accept":
            collection = sharing.invitation_accept(invitation=invitation, request=request)
            messages.success(request, f"{collection.name} is shared with you now.")
            return redirect(_documents_url({"collection": collection.slug}))
        sharing.invitation_decline(invitation=invitation, request=request)
    except permissions.Denied as denied:
        raise denied.http_error() from None
    messages.success(request, f"Declined {invitation.collection.name}.")
    return redirect("corpus:documents")
