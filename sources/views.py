"""A collection's sources page: each source with its last sync (what it found, failures with their
reasons), its next sync and its documents' status; "Sync now", add and delete for the collection's
editors. The list is an htmx partial of the page, refreshed while a sync or a document is under
way; without JS the forms still post and redirect back."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.quotas import wait_seconds
from corpus import permissions
from corpus.models import IN_PROGRESS, Collection, Document
from sources import ownership, services
from sources.forms import SourceForm
from sources.models import Source
from sources.quotas import SyncNowQuota

DOCUMENTS_SHOWN = 50  # per source on the page


def _allowed(call):
    try:
        return call()
    except permissions.Denied as denied:
        raise denied.http_error() from None


def _page(request: HttpRequest, collection: Collection, *, form: SourceForm | None = None, status: int = 200):
    sources = list(Source.objects.filter(collection=collection).order_by("pk"))
    busy = any(s.state in (Source.State.QUEUED, Source.State.SYNCING) for s in sources)
    for source in sources:
        documents = Document.objects.filter(source_link__source=source).order_by("source")
        source.shown_documents = list(documents[:DOCUMENTS_SHOWN])
        source.document_total = documents.count()
        busy = busy or documents.filter(status__in=[*IN_PROGRESS, Document.Status.QUEUED]).exists()
    can_write = permissions.can_write_collection(request.user, collection)
    context = {"collection": collection, "sources": sources, "can_write": can_write, "busy": busy,
               "form": form or (SourceForm(collection=collection, user=request.user) if can_write else None)}
    if request.htmx and request.method == "GET":
        return render(request, "sources/sources.html#source-list", context)
    return render(request, "sources/sources.html", context, status=status)


@login_required
def source_list(request: HttpRequest, slug: str) -> HttpResponse:
    collection = _allowed(lambda: permissions.collection_for(request.user, slug))
    return _page(request, collection)


@require_POST
@login_required
def source_add(request: HttpRequest, slug: str) -> HttpResponse:
    collection = _allowed(lambda: permissions.collection_for(request.user, slug, write=True))
    form = SourceForm(request.POST, collection=collection, user=request.user)
    if not form.is_valid():
        return _page(request, collection, form=form, status=400)
    try:
        source = services.source_create(collection=collection, created_by=request.user, request=request,
                                        **form.cleaned_data)
    except ValidationError as exc:  # e.g. added by someone else since the form was checked
        form.add_service_error(exc)
        return _page(request, collection, form=form, status=400)
    messages.success(request, f"Added {source}; its first sync is queued.")
    return redirect("sources:list", slug=collection.slug)


def _source(request: HttpRequest, pk: int) -> Source:
    return _allowed(lambda: permissions.collection_row_for(request.user, Source.objects, pk, write=True,
                                                           noun="source"))


@require_POST
@login_required
def source_sync(request: HttpRequest, pk: int) -> HttpResponse:
    source = _source(request, pk)
    wait = wait_seconds(SyncNowQuota, request)
    if wait is not None:
        messages.error(request, f"You asked for many syncs lately; try again in {wait} seconds.")
        return redirect("sources:list", slug=source.collection.slug)
    services.source_sync_enqueue(source=source)
    messages.success(request, f"Sync of {source} queued.")
    return redirect("sources:list", slug=source.collection.slug)


@require_POST
@login_required
def source_delete(request: HttpRequest, pk: int) -> HttpResponse:
    source = _source(request, pk)
    removed = services.source_delete(source=source, request=request)
    messages.success(request, f"Deleted {source} and its {removed} document(s).")
    return redirect("sources:list", slug=source.collection.slug)


@require_POST
@login_required
def source_take_over(request: HttpRequest, pk: int) -> HttpResponse:
    """Become the source's owner (it syncs in your name from now on), resuming it if it was paused."""
    source = _source(request, pk)
    try:
        ownership.source_take_over(source=source, user=request.user, request=request)
    except permissions.Denied as denied:
        messages.error(request, str(denied))
        return redirect("sources:list", slug=source.collection.slug)
    messages.success(request, f"{source} is yours now; it syncs in your name.")
    return redirect("sources:list", slug=source.collection.slug)
