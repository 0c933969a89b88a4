"""Admin for sources: the list with last sync, its counts and the next sync; add (a folder chosen
from SOURCES_FOLDERS, never typed), change schedule, limits and tags, delete with its documents,
and the "Sync now" action. Who sees and changes what comes from corpus.permissions (staff see the
sources of collections they may read, change those of collections they may write); writes go
through sources.services like everywhere else."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from corpus import permissions
from sources import ownership, services
from sources.folders import folder_choices
from sources.forms import tags_from_text
from sources.models import Source


class SourceAdminForm(forms.ModelForm):
    tags_text = forms.CharField(label="Tags", required=False, help_text="Separated by commas.")
    url = forms.CharField(label="URL", required=False, max_length=2000, help_text="Web page and site sources.")

    class Meta:
        model = Source
        fields = ["collection", "kind", "url", "path", "schedule", "max_pages", "max_depth"]

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tags_text"].initial = ", ".join(self.instance.tags or [])
        if "collection" in self.fields:
            self.fields["collection"].queryset = permissions.writable_collections(user)
        if "path" in self.fields:
            self.fields["path"] = forms.ChoiceField(
                required=False, choices=[("", "—")] + [(p, p) for p in folder_choices()],
                help_text="Folder sources: one of the folders the operator allows (SOURCES_FOLDERS).")

    def clean(self):
        data = super().clean()
        data["tags"] = tags_from_text(data.pop("tags_text", ""))
        try:
            if self.instance.pk is None:
                data.update(services.clean_new_source(
                    kind=data.get("kind", ""), url=data.get("url", ""), path=data.get("path", ""),
                    schedule=data.get("schedule", ""), max_pages=data.get("max_pages"),
                    max_depth=data.get("max_depth"), tags=data["tags"], collection=data.get("collection")))
            else:
                services.clean_changes(current=self.instance, schedule=data.get("schedule", ""),
                                       max_pages=data.get("max_pages"), max_depth=data.get("max_depth"),
                                       tags=data["tags"])
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                field = "tags_text" if field == "tags" else field
                self.add_error(field if field in self.fields else None, errors)
        return data


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    form = SourceAdminForm
    list_display = ["__str__", "collection", "created_by", "schedule", "state", "paused", "sync_finished_at",
                    "last_counts", "last_failed", "next_sync_at"]
    list_filter = ["kind", "schedule", "state"]
    search_fields = ["url", "path"]
    actions = ["sync_now", "take_over", "delete_sources"]
    readonly_fields = ["state", "paused_reason", "error", "sync_started_at", "sync_finished_at", "next_sync_at",
                       "last_counts", "failures_list", "created_by", "created_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Source]:
        return Source.objects.filter(collection__in=permissions.readable_collections(request.user)).select_related(
            "collection")

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)

        class WithUser(form):
            def __init__(self, *args, **inner):
                super().__init__(*args, user=request.user, **inner)

        return WithUser

    def get_fields(self, request, obj=None):
        where = ["collection", "kind", "url", "path"] if obj is None else []
        return [*where, "schedule", "max_pages", "max_depth", "tags_text",
                *(self.readonly_fields if obj is not None else [])]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return ["collection", "kind", "url", "path", *self.readonly_fields]

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # it would skip the services (the documents' files)
        return actions

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.has_module_permission(request) and permissions.writable_collections(request.user).exists()

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return self.has_module_permission(request) and permissions.can_write_collection(request.user, obj.collection)

    has_delete_permission = has_change_permission

    def save_model(self, request, obj: Source, form, change: bool) -> None:
        data = form.cleaned_data
        if change:
            saved = services.source_update(source=obj, schedule=data["schedule"], max_pages=data["max_pages"],
                                           max_depth=data["max_depth"], tags=data["tags"], request=request)
        else:
            saved = services.source_create(
                collection=data["collection"], created_by=request.user, kind=data["kind"], url=data["url"],
                path=data["path"], schedule=data["schedule"], max_pages=data["max_pages"],
                max_depth=data["max_depth"], tags=data["tags"], request=request)
        obj.pk = saved.pk

    def delete_model(self, request, obj: Source) -> None:
        services.source_delete(source=obj, request=request)

    @admin.display(description="last sync: new / changed / unchanged / removed")
    def last_counts(self, obj: Source) -> str:
        return f"{obj.last_new} / {obj.last_changed} / {obj.last_unchanged} / {obj.last_removed}"

    @admin.display(description="failures")
    def failures_list(self, obj: Source) -> str:
        return "\n".join(f"{f['item']}: {f['reason']}" for f in obj.failures) or "—"

    def _writable(self, request: HttpRequest, queryset: QuerySet[Source]) -> list[Source]:
        writable = permissions.writable_collections(request.user)
        return list(queryset.filter(collection__in=writable))

    @admin.action(description="Sync the selected sources now")
    def sync_now(self, request: HttpRequest, queryset: QuerySet[Source]):
        sources = self._writable(request, queryset)
        for source in sources:
            services.source_sync_enqueue(source=source)
        self.message_user(request, f"Queued a sync of {len(sources)} source(s).")

    @admin.display(description="paused", boolean=True)
    def paused(self, obj: Source) -> bool:
        return bool(obj.paused_reason)

    @admin.action(description="Take the selected sources over (they sync in your name; paused ones resume)")
    def take_over(self, request: HttpRequest, queryset: QuerySet[Source]):
        taken, refused = 0, []
        for source in self._writable(request, queryset):
            try:
                ownership.source_take_over(source=source, user=request.user, request=request)
                taken += 1
            except permissions.Denied as denied:
                refused.append(f"{source}: {denied}")
        self.message_user(request, f"Took over {taken} source(s).")
        for message in refused:
            self.message_user(request, message, level=messages.ERROR)

    @admin.action(description="Delete the selected sources and their documents")
    def delete_sources(self, request: HttpRequest, queryset: QuerySet[Source]):
        sources = self._writable(request, queryset)
        removed = sum(services.source_delete(source=source, request=request) for source in sources)
        self.message_user(request, f"Deleted {len(sources)} source(s) and {removed} document(s).")
