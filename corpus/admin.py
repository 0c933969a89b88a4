"""Admin for collections, documents and (read-only) chunks.

Who sees and changes what comes from corpus.permissions, not from Django's model permissions,
so the admin, the web pages and the API agree. Uploads, re-ingestion and deletion go through
corpus.services like everywhere else.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from corpus import permissions, services
from corpus.models import Chunk, Collection, Document


class _StaffOnly:
    """Staff reach the corpus admin; each object is then checked through corpus.permissions."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_module_permission(request)


@admin.register(Collection)
class CollectionAdmin(_StaffOnly, admin.ModelAdmin):
    list_display = ["name", "slug", "chunker", "chunk_size", "contextualization", "embedding_mode", "is_public",
                    "document_count"]
    list_filter = ["chunker", "contextualization", "is_public"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    filter_horizontal = ["readers", "editors"]
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "owner"]}),
        ("Ingestion", {"fields": ["chunker", "chunk_size", "chunk_overlap", "semantic_threshold",
                                  "contextualization", "embedding_mode"],
                       "description": "Changing these makes re-ingestion rebuild the documents' chunks."}),
        ("Access", {"fields": ["is_public", "readers", "editors"]}),
    ]
    actions = ["reingest_collections"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Collection]:
        return permissions.readable_collections(request.user).annotate(n_documents=Count("documents"))

    @admin.display(description="documents", ordering="n_documents")
    def document_count(self, obj: Collection) -> int:
        return obj.n_documents

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return permissions.can_write_collection(request.user, obj)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_change_permission(request, obj)

    def save_model(self, request, obj: Collection, form, change: bool) -> None:
        if not change and obj.owner is None:
            obj.owner = request.user
        super().save_model(request, obj, form, change)

    @admin.action(description="Re-ingest the documents of the selected collections (if out of date)")
    def reingest_collections(self, request: HttpRequest, queryset: QuerySet[Collection]) -> None:
        count = 0
        for collection in queryset:
            if not permissions.can_write_collection(request.user, collection):
                continue
            for document in collection.documents.all():
                services.document_reingest(document=document)
                count += 1
        self.message_user(request, f"Checked {count} document(s); out-of-date ones are queued.")


class DocumentUploadForm(forms.ModelForm):
    """Adding a document in the admin is an upload: the file goes through services.document_ingest."""

    upload = forms.FileField(help_text="Text, Markdown, reStructuredText, HTML, PDF or DOCX.")

    class Meta:
        model = Document
        fields = ["collection", "source"]

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["collection"].queryset = permissions.writable_collections(user)
        self.fields["source"].required = False
        self.fields["source"].help_text = "Defaults to the file name."

    def clean_upload(self):
        upload = self.cleaned_data["upload"]
        error = services.size_error(upload.size)
        if error:
            raise forms.ValidationError(error)
        if not upload.size:
            raise forms.ValidationError("The file is empty.")
        return upload

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("source") and cleaned.get("upload"):
            cleaned["source"] = cleaned["upload"].name
            self.instance.source = cleaned["source"]
        return cleaned

    def validate_unique(self):
        pass  # uploading an existing source updates that document


@admin.register(Document)
class DocumentAdmin(_StaffOnly, admin.ModelAdmin):
    list_display = ["__str__", "collection", "status", "progress", "chunk_count", "short_error", "updated_at"]
    list_filter = ["status", "collection"]
    search_fields = ["title", "source"]
    list_select_related = ["collection"]
    readonly_fields = ["collection", "source", "title", "file", "media_type", "content_hash", "built_hash",
                       "built_signature", "status", "progress", "error", "chunk_count", "chunks_link", "summary",
                       "uploaded_by", "created_at", "updated_at", "ingested_at"]
    exclude = ["text", "pages", "progress_done", "progress_total"]
    actions = ["reingest_documents", "delete_documents"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        return permissions.readable_documents(request.user).annotate(n_chunks=Count("chunks"))

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # bulk delete would skip services (stored files)
        return actions

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            form = DocumentUploadForm

            class UploadFormForUser(form):
                def __init__(self, *args, **kw):
                    super().__init__(*args, user=request.user, **kw)

            kwargs["form"] = UploadFormForUser
            kwargs["fields"] = ["collection", "source", "upload"]
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is not None else []

    def get_exclude(self, request, obj=None):
        return self.exclude if obj is not None else None

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["collection", "source", "upload"]
        return super().get_fields(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.has_module_permission(request) and permissions.writable_collections(request.user).exists()

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False if obj is not None else self.has_module_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return permissions.can_write_document(request.user, obj)

    def save_model(self, request, obj: Document, form, change: bool) -> None:
        upload = form.cleaned_data["upload"]
        document = services.document_ingest(
            collection=form.cleaned_data["collection"], source=form.cleaned_data.get("source") or upload.name,
            data=upload.read(), filename=upload.name, uploaded_by=request.user)
        obj.pk = document.pk  # so the admin redirects to the document it just stored

    def delete_model(self, request, obj: Document) -> None:
        services.document_delete(document=obj)

    @admin.display(description="progress")
    def progress(self, obj: Document) -> str:
        return f"{obj.progress_done}/{obj.progress_total}" if obj.progress_total else "–"

    @admin.display(description="chunks", ordering="n_chunks")
    def chunk_count(self, obj: Document) -> int:
        return obj.n_chunks

    @admin.display(description="error")
    def short_error(self, obj: Document) -> str:
        return obj.error[:120]

    @admin.display(description="chunk list")
    def chunks_link(self, obj: Document) -> str:
        url = reverse("admin:corpus_chunk_changelist") + f"?document__id__exact={obj.pk}"
        return format_html('<a href="{}">Show the chunks</a>', url)

    @admin.action(description="Re-ingest the selected documents")
    def reingest_documents(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        done = self._for_each_writable(request, queryset,
                                       lambda document: services.document_reingest(document=document, force=True))
        self.message_user(request, f"Queued {done} document(s) for re-ingestion.")

    @admin.action(description="Delete the selected documents (chunks and files too)")
    def delete_documents(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        done = self._for_each_writable(request, queryset,
                                       lambda document: services.document_delete(document=document))
        self.message_user(request, f"Deleted {done} document(s).")

    def _for_each_writable(self, request: HttpRequest, queryset: QuerySet[Document], apply) -> int:
        """Apply `apply` to the documents the user may change; warn about the others. Returns the count done."""
        done = refused = 0
        for document in queryset.select_related("collection"):
            if permissions.can_write_document(request.user, document):
                apply(document)
                done += 1
            else:
                refused += 1
        if refused:
            self.message_user(request, f"{refused} document(s) are in collections you may not change.",
                              level=messages.WARNING)
        return done


@admin.register(Chunk)
class ChunkAdmin(_StaffOnly, admin.ModelAdmin):
    list_display = ["document", "chunk_index", "start", "end", "page", "token_count", "heading_path"]
    list_filter = ["document__collection"]
    search_fields = ["text", "document__source"]
    list_select_related = ["document"]
    fields = ["document", "chunk_index", "start", "end", "page", "token_count", "heading_path", "context", "text"]
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Chunk]:
        return permissions.readable_chunks(request.user).defer("embedding")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
