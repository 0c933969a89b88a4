"""Admin for running a team's corpus: collections, documents (live status and progress, multi-file
upload, re-ingest, move, delete, chunk list and preview) and read-only chunks.

Who sees and changes what comes from corpus.permissions, not from Django's model permissions, so
the admin, the web pages and the API agree: staff see the collections they may read (superusers:
all, and the pages say so), change documents where they may write and change collections they
manage. Every write goes through corpus.services like everywhere else.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import BooleanField, Count, ExpressionWrapper, Q, QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import ngettext

from accounts.quotas import wait_seconds
from corpus import (
    admin_llm,  # noqa: F401  (registers the LLM settings page)
    permissions,
    preview,
    selectors,
    services,
    sharing,
)
from corpus.forms import GroupNamesField, MultipleFileField, UsernamesField, clean_shares
from corpus.models import Chunk, Collection, Document
from corpus.quotas import ForcedReingestQuota, move_rebuild_wait
from corpus.uploads import SUPPORTED_HELP, accept_attribute
from lib.numbers import parse_int

SUPERUSER_NOTICE = "You are a superuser: you see and may change every collection, whoever owns it."


class PermittedCollectionFilter(admin.RelatedFieldListFilter):
    """The collection filter, offering only the collections the user may read: Django's own lists
    every collection, and so would show staff the names and ids of other people's private ones."""

    def field_choices(self, field, request, model_admin):
        return [(c.pk, str(c)) for c in permissions.readable_collections(request.user).order_by("name")]


class _StaffOnly:
    """Staff reach the corpus admin; each object is then checked through corpus.permissions."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_module_permission(request)

    def changelist_view(self, request: HttpRequest, extra_context=None):
        extra_context = {"superuser_notice": SUPERUSER_NOTICE if request.user.is_superuser else "",
                         **(extra_context or {})}
        return super().changelist_view(request, extra_context)


# Collections ---------------------------------------------------------------------------------------

SHARES = ("readers", "editors", "reader_groups", "editor_groups")  # collection_share's arguments


@admin.register(Collection)
class CollectionAdmin(_StaffOnly, admin.ModelAdmin):
    list_display = ["name", "slug", "owner", "chunker", "chunk_size", "contextualization", "embedding_mode",
                    "is_public", "document_count", "reembed_progress", "documents_link"]
    list_filter = ["chunker", "contextualization", "is_public"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    # By username, as on the collection page: a list of every account is no business of staff.
    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name in ("readers", "editors"):
            return UsernamesField(label=db_field.verbose_name.capitalize(),
                                  help_text="Usernames, separated by commas or spaces.")
        if db_field.name in ("reader_groups", "editor_groups"):
            return GroupNamesField(label=db_field.verbose_name.capitalize(),
                                   help_text="Group names, separated by commas: every member.")
        return super().formfield_for_manytomany(db_field, request, **kwargs)
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "owner"]}),
        ("Ingestion", {"fields": ["chunker", "chunk_size", "chunk_overlap", "semantic_threshold",
                                  "contextualization", "embedding_mode"],
                       "description": "Changing these re-ingests the collection's documents."}),
        ("Access", {"fields": ["is_public", "readers", "editors", "reader_groups", "editor_groups",
                               "pending_invitations"],
                    "description": "People who do not read or edit the collection yet are invited: it is "
                                   "shared with them once they accept. Groups: only those you belong to."}),
    ]
    actions = ["reingest_collections", "reembed_collections", "delete_collections"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Collection]:
        return (permissions.readable_collections(request.user).select_related("owner")
                .annotate(n_documents=Count("documents")))

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        # Only a superuser hands a collection over.
        return ["pending_invitations"] if request.user.is_superuser else ["owner", "pending_invitations"]

    @admin.display(description="invited, waiting for their answer")
    def pending_invitations(self, obj: Collection) -> str:
        if obj is None or obj.pk is None:
            return "—"
        return ", ".join(f"{i.user} ({i.get_role_display().lower()}, by {i.invited_by or 'someone'})"
                         for i in obj.invitations.select_related("user", "invited_by")) or "—"

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)

        class SharingForm(form):
            """The people fields start with the invited people too (saving keeps their invitations);
            the names typed become people and groups as on the collection page (forms.clean_shares)."""

            def __init__(self, *args, **inner):
                super().__init__(*args, **inner)
                if self.instance.pk is not None:
                    people = sharing.shares_with_invitations(self.instance)
                    for field in ("readers", "editors"):
                        if field in self.fields:
                            self.initial[field] = people[field]

            def clean(self):
                data = super().clean()
                if not self.errors:
                    clean_shares(self, collection=self.instance if self.instance.pk else None, request=request)
                return data

        return SharingForm

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # it would skip the services (stored files)
        return actions

    @admin.display(description="documents", ordering="n_documents")
    def document_count(self, obj: Collection) -> int:
        return obj.n_documents

    @admin.display(description="")
    def documents_link(self, obj: Collection) -> str:
        url = reverse("admin:corpus_document_changelist") + f"?collection__id__exact={obj.pk}"
        return format_html('<a href="{}">Documents</a>', url)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return permissions.can_manage_collection(request.user, obj)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_change_permission(request, obj)

    def save_model(self, request, obj: Collection, form, change: bool) -> None:
        if not change:
            owner = obj.owner if request.user.is_superuser and obj.owner else request.user
            created = services.collection_create(owner=owner, name=obj.name, slug=obj.slug, request=request, **{
                name: getattr(obj, name) for name in services.COLLECTION_SETTINGS})
            obj.pk, obj.owner, obj._state.adding = created.pk, owner, False  # for save_related and the redirect
            return
        fields = {name: form.cleaned_data[name] for name in form.changed_data
                  if name in ("name", "slug", *services.COLLECTION_SETTINGS)}
        stored = Collection.objects.get(pk=obj.pk)
        if "owner" in form.changed_data and request.user.is_superuser:
            stored.owner = obj.owner
            stored.save(update_fields=["owner"])
        # Re-ingests when the chunk settings change; audits making it public.
        services.collection_update(collection=stored, request=request, **fields)

    def save_related(self, request, form, formsets, change: bool) -> None:
        try:
            sharing.collection_share(collection=form.instance, request=request, **{
                field: form.cleaned_data[field] for field in SHARES})
        except ValidationError as exc:  # past a cap on invitations (corpus.sharing): the rest is saved
            messages.error(request, f"Sharing not changed: {' '.join(exc.messages)}")

    def delete_model(self, request, obj: Collection) -> None:
        services.collection_delete(collection=obj, request=request)

    @admin.action(description="Re-ingest the documents of the selected collections (if out of date)")
    def reingest_collections(self, request: HttpRequest, queryset: QuerySet[Collection]) -> None:
        count = 0
        for collection in queryset:
            if not permissions.can_write_collection(request.user, collection):
                continue
            for document in collection.documents.all():
                services.document_reingest(document=document)
                count += 1
        message = ngettext("Checked %(n)d document; queued if out of date.",
                           "Checked %(n)d documents; out-of-date ones are queued.", count)
        self.message_user(request, message % {"n": count})

    @admin.action(description="Re-embed the selected collections with the configured embedding model")
    def reembed_collections(self, request: HttpRequest, queryset: QuerySet[Collection]) -> None:
        allowed = [c for c in queryset if permissions.can_reembed(request.user, c)]
        started = sum(services.collection_reembed(collection=c) for c in allowed)
        refused = queryset.count() - len(allowed)
        begun = ngettext("Re-embedding started for %(n)d collection", "Re-embedding started for %(n)d collections",
                         started) % {"n": started}
        self.message_user(request, begun + "; the others are already on the configured model or re-embedding."
                          + (f" {refused} refused: only staff who manage a collection may re-embed it." if refused
                             else ""), messages.WARNING if refused else messages.SUCCESS)

    @admin.display(description="embedding")
    def reembed_progress(self, obj: Collection) -> str:
        if obj.reembed_status in ("queued", "running"):
            return f"{obj.embedding_model} → {obj.reembed_model}: {obj.reembed_done}/{obj.reembed_total}"
        if obj.reembed_status == "failed":
            return f"{obj.embedding_model} (re-embed failed: {obj.reembed_error[:200]})"
        return obj.embedding_model

    @admin.action(description="Delete the selected collections with their documents and files")
    def delete_collections(self, request: HttpRequest, queryset: QuerySet[Collection]):
        manageable = [c for c in queryset if permissions.can_manage_collection(request.user, c)]
        refused = queryset.count() - len(manageable)
        if request.POST.get("confirm") != "yes":
            return TemplateResponse(request, "admin/corpus/collection/delete_confirm.html", {
                **self.admin_site.each_context(request), "title": "Delete collections?", "collections": manageable,
                "refused": refused, "opts": self.opts,
                "documents": Document.objects.filter(collection__in=manageable).count(),
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME})
        for collection in manageable:
            services.collection_delete(collection=collection, request=request)
        self.message_user(request, ngettext("Deleted %(n)d collection.", "Deleted %(n)d collections.", len(manageable))
                          % {"n": len(manageable)})
        if refused:
            self.message_user(request, ngettext("%(n)d collection is not yours to delete.",
                                                "%(n)d collections are not yours to delete.", refused)
                              % {"n": refused}, level=messages.WARNING)
        return None


# Documents -----------------------------------------------------------------------------------------


class AdminUploadForm(forms.Form):
    collection = forms.ModelChoiceField(queryset=Collection.objects.none(), empty_label="Choose a collection…",
                                        error_messages={"invalid_choice": "Choose a collection you may add to."})
    files = MultipleFileField(help_text=SUPPORTED_HELP + " Each file is checked on its own: a refused one is "
                                                         "reported by name, the others are added.")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["collection"].queryset = permissions.writable_collections(user)
        self.fields["files"].widget.attrs["accept"] = accept_attribute()


class MoveForm(forms.Form):
    target = forms.ModelChoiceField(queryset=Collection.objects.none(), label="Move to",
                                    empty_label="Choose a collection…")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target"].queryset = permissions.writable_collections(user)


@admin.register(Document)
class DocumentAdmin(_StaffOnly, admin.ModelAdmin):
    list_display = ["__str__", "collection", "status_progress", "chunk_count", "short_error", "updated_at",
                    "views_links"]
    list_filter = ["status", ("collection", PermittedCollectionFilter)]
    search_fields = ["title", "source"]
    list_select_related = ["collection"]
    readonly_fields = ["collection", "source", "title", "file", "media_type", "content_hash", "built_hash",
                       "built_signature", "status_progress", "error", "chunk_count", "views_links", "summary",
                       "uploaded_by", "created_at", "updated_at", "ingested_at"]
    fields = readonly_fields
    actions = ["reingest_documents", "move_documents", "delete_documents"]

    class Media:
        js = ["corpus/admin-progress.js"]
        css = {"all": ["corpus/admin.css"]}

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        return permissions.readable_documents(request.user).annotate(n_chunks=Count("chunks"))

    def get_urls(self):
        own = [
            path("progress/", self.admin_site.admin_view(self.progress_view), name="corpus_document_progress"),
            path("<int:pk>/chunks/", self.admin_site.admin_view(self.chunks_view), name="corpus_document_chunks"),
            path("<int:pk>/preview/", self.admin_site.admin_view(self.preview_view),
                 name="corpus_document_preview"),
        ]
        return own + super().get_urls()

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # it would skip the services (stored files)
        return actions

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.has_module_permission(request) and permissions.writable_collections(request.user).exists()

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False if obj is not None else self.has_module_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return permissions.can_write_document(request.user, obj)

    def delete_model(self, request, obj: Document) -> None:
        services.document_delete(document=obj, request=request)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if object_id is None:
            return self.upload_view(request)  # "Add document" is the multi-file upload
        return super().changeform_view(request, object_id, form_url, extra_context)

    # Columns

    @admin.display(description="status")
    def status_progress(self, obj: Document) -> str:
        """Status and progress; admin-progress.js refreshes them while ingestion runs."""
        return format_html(
            '<span class="doc-progress" data-document="{}" data-status="{}" data-url="{}">'
            '<span class="doc-status status-{}">{}</span> {}</span>',
            obj.pk, obj.status, reverse("admin:corpus_document_progress"), obj.status, obj.get_status_display(),
            _progress_bar(obj))

    @admin.display(description="chunks", ordering="n_chunks")
    def chunk_count(self, obj: Document) -> str:
        return format_html('<span class="doc-chunks" data-document="{}">{}</span>', obj.pk, obj.n_chunks)

    @admin.display(description="error")
    def short_error(self, obj: Document) -> str:
        return format_html('<span class="doc-error" data-document="{}" title="{}">{}</span>', obj.pk, obj.error,
                           _shorten(obj.error))

    @admin.display(description="chunks and preview")
    def views_links(self, obj: Document) -> str:
        return format_html('<a href="{}">Chunks</a> · <a href="{}">Preview</a>',
                           reverse("admin:corpus_document_chunks", args=[obj.pk]),
                           reverse("admin:corpus_document_preview", args=[obj.pk]))

    # Pages

    def progress_view(self, request: HttpRequest) -> JsonResponse:
        """Status and progress of the documents `?ids=1,2,3` the user may read (others are left out)."""
        ids = [n for part in request.GET.get("ids", "").split(",")[:500] if (n := parse_int(part.strip())) is not None]
        documents = self.get_queryset(request).filter(pk__in=ids)
        return JsonResponse({"documents": [{
            "id": d.pk, "status": d.status, "status_display": d.get_status_display(),
            "progress_done": d.progress_done, "progress_total": d.progress_total, "error": d.error,
            "error_short": _shorten(d.error), "chunk_count": d.n_chunks} for d in documents]})

    def upload_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = AdminUploadForm(request.POST or None, request.FILES or None, user=request.user,
                               initial={"collection": _upload_default(request)})
        if request.method == "POST" and form.is_valid():
            collection = form.cleaned_data["collection"]
            results = services.documents_upload(collection=collection, files=form.cleaned_data["files"],
                                                uploaded_by=request.user)
            accepted = [r.name for r in results if r.accepted]
            if accepted:
                self.message_user(request, f"Added to {collection.name} (queued for ingestion): "
                                           f"{', '.join(accepted)}.", level=messages.SUCCESS)
            for result in results:
                if not result.accepted:
                    self.message_user(request, result.error, level=messages.ERROR)
            return redirect(reverse("admin:corpus_document_changelist") + f"?collection__id__exact={collection.pk}")
        context = {**self.admin_site.each_context(request), "title": "Upload documents", "form": form,
                   "opts": self.opts, "media": self.media + form.media,
                   "superuser_notice": SUPERUSER_NOTICE if request.user.is_superuser else ""}
        return TemplateResponse(request, "admin/corpus/document/upload.html", context,
                                status=400 if form.is_bound else 200)

    def _readable(self, request: HttpRequest, pk: int) -> Document:
        document = self.get_queryset(request).select_related("collection").filter(pk=pk).first()
        if document is None:
            raise PermissionDenied  # the admin's way: no hint whether it exists
        return document

    def chunks_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Each chunk's text, context and whether it is embedded (read only)."""
        document = self._readable(request, pk)
        chunks = (Chunk.objects.filter(document=document).defer("embedding")
                  .annotate(embedded=ExpressionWrapper(Q(embedding__isnull=False), output_field=BooleanField()))
                  .order_by("chunk_index"))
        return TemplateResponse(request, "admin/corpus/document/chunks.html", {
            **self.admin_site.each_context(request), "title": f"Chunks of {document}", "document": document,
            "chunks": chunks, "opts": self.opts})

    def preview_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The document's text with its chunk boundaries marked."""
        document = self._readable(request, pk)
        spans = [preview.Span(index, start, end) for index, start, end in
                 Chunk.objects.filter(document=document).values_list("chunk_index", "start", "end")]
        return TemplateResponse(request, "admin/corpus/document/preview.html", {
            **self.admin_site.each_context(request), "title": f"Preview of {document}", "document": document,
            "pieces": preview.pieces(document.text, spans), "chunk_count": len(spans), "opts": self.opts,
            "media": self.media})

    # Actions

    @admin.action(description="Re-ingest the selected documents")
    def reingest_documents(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        over_budget: list[int] = []

        def reingest(document: Document) -> None:
            wait = wait_seconds(ForcedReingestQuota, request)  # the documents page's and the API's budget
            if wait is not None:
                over_budget.append(wait)
                return
            services.document_reingest(document=document, force=True)

        done = self._for_each_writable(request, queryset, reingest) - len(over_budget)
        self.message_user(request, ngettext("Queued %(n)d document for re-ingestion.",
                                            "Queued %(n)d documents for re-ingestion.", done) % {"n": done})
        if over_budget:
            self.message_user(request, f"Not re-ingested: {len(over_budget)} (you re-ingested many documents "
                                       f"lately); try again in {max(over_budget)} seconds.", level=messages.ERROR)

    @admin.action(description="Delete the selected documents (chunks and files too)")
    def delete_documents(self, request: HttpRequest, queryset: QuerySet[Document]):
        """Asks first (as every destructive action does), then deletes those the user may change."""
        if request.POST.get("confirm") != "yes":
            documents = list(queryset.select_related("collection"))
            writable = [d for d in documents if permissions.can_write_document(request.user, d)]
            return TemplateResponse(request, "admin/corpus/document/delete_confirm.html", {
                **self.admin_site.each_context(request), "title": "Delete documents?", "documents": writable,
                "refused": len(documents) - len(writable), "opts": self.opts,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME})
        done = self._for_each_writable(request, queryset,
                                       lambda document: services.document_delete(document=document, request=request))
        self.message_user(request, ngettext("Deleted %(n)d document.", "Deleted %(n)d documents.", done) % {"n": done})
        return None

    @admin.action(description="Move the selected documents to another collection")
    def move_documents(self, request: HttpRequest, queryset: QuerySet[Document]):
        form = MoveForm(request.POST if "apply" in request.POST else None, user=request.user)
        if not form.is_valid():
            return TemplateResponse(request, "admin/corpus/document/move.html", {
                **self.admin_site.each_context(request), "title": "Move documents", "form": form,
                "documents": queryset.select_related("collection"), "opts": self.opts,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME})
        target = form.cleaned_data["target"]
        clashes: list[str] = []
        over_budget: list[tuple[Document, int]] = []

        def move(document: Document) -> None:
            # A move that rebuilds the document draws on the same budget as on the API.
            wait = move_rebuild_wait(request, document=document, collection=target)
            if wait is not None:
                over_budget.append((document, wait))
                return
            try:
                services.document_move(document=document, collection=target, request=request)
            except ValidationError as exc:
                clashes.extend(exc.messages)

        # The target is one the user may write to (MoveForm); moving out takes the right to delete.
        done = self._for_each_writable(request, queryset, move, allowed=permissions.can_delete_document)
        moved = done - len(clashes) - len(over_budget)
        self.message_user(request, ngettext("Moved %(n)d document to %(to)s", "Moved %(n)d documents to %(to)s", moved)
                          % {"n": moved, "to": target.name} + "; documents built under other settings are re-ingested.")
        for clash in clashes:
            self.message_user(request, clash, level=messages.ERROR)
        if over_budget:
            names = ", ".join(str(document) for document, _ in over_budget[:10])
            more = f" and {len(over_budget) - 10} more" if len(over_budget) > 10 else ""
            self.message_user(request, f"Not moved: {names}{more} (moving rebuilds a document under the chunk "
                                       f"settings of {target.name}, and you rebuilt many documents lately); try "
                                       f"again in {max(wait for _, wait in over_budget)} seconds.",
                              level=messages.ERROR)
        return None

    def _for_each_writable(self, request: HttpRequest, queryset: QuerySet[Document], apply,
                           allowed=permissions.can_write_document) -> int:
        """Apply `apply` to the documents the user may change (`allowed`); warn about the others.
        Returns the count done."""
        done = refused = 0
        for document in queryset.select_related("collection"):
            if allowed(request.user, document):
                try:
                    apply(document)
                except services.DocumentGone:
                    continue  # deleted by someone else since the list was shown: nothing to do
                done += 1
            else:
                refused += 1
        if refused:
            self.message_user(request, ngettext("%(n)d document is in a collection you may not change.",
                                                "%(n)d documents are in collections you may not change.", refused)
                              % {"n": refused},
                              level=messages.WARNING)
        return done


def _upload_default(request: HttpRequest) -> Collection | None:
    """selectors.upload_target for the collection `?collection=<id>` (the list's filter), if readable."""
    wanted = request.GET.get("collection", "")
    readable = permissions.readable_collections(request.user)
    wanted_id = parse_int(wanted, minimum=1)
    viewing = readable.filter(pk=wanted_id).first() if wanted_id is not None else None
    return selectors.upload_target(user=request.user, viewing=viewing)


def _progress_bar(document: Document) -> str:
    if document.progress_total:
        return format_html('<progress max="{}" value="{}"></progress> <span class="doc-count">{}/{}</span>',
                           document.progress_total, document.progress_done, document.progress_done,
                           document.progress_total)
    if document.status in (Document.Status.READY, Document.Status.FAILED):
        return mark_safe('<span class="doc-count"></span>')
    return mark_safe('<progress></progress> <span class="doc-count"></span>')  # not counted yet


def _shorten(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# Chunks --------------------------------------------------------------------------------------------


@admin.register(Chunk)
class ChunkAdmin(_StaffOnly, admin.ModelAdmin):
    list_display = ["document", "chunk_index", "short_text", "short_context", "embedded", "page", "token_count"]
    list_filter = [("document__collection", PermittedCollectionFilter)]
    search_fields = ["text", "document__source"]
    list_select_related = ["document"]
    fields = ["document", "chunk_index", "start", "end", "page", "token_count", "heading_path", "embedded", "context",
              "text"]
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Chunk]:
        return (permissions.readable_chunks(request.user).defer("embedding")
                .annotate(is_embedded=ExpressionWrapper(Q(embedding__isnull=False), output_field=BooleanField())))

    @admin.display(description="embedded", boolean=True, ordering="is_embedded")
    def embedded(self, obj: Chunk) -> bool:
        return obj.is_embedded

    @admin.display(description="text")
    def short_text(self, obj: Chunk) -> str:
        return _shorten(obj.text, 160)

    @admin.display(description="context")
    def short_context(self, obj: Chunk) -> str:
        return _shorten(obj.context, 80)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

