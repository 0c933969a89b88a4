from django.contrib import admin
from django.http import HttpRequest

from audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read only, for staff: an audit trail nobody may edit or delete by hand (prune_audit does)."""

    list_display = ("time", "actor_username", "action", "target_type", "target_label", "ip")
    list_filter = ("action", "time", ("actor", admin.RelatedOnlyFieldListFilter))
    search_fields = ("actor_username", "target_label", "target_id", "ip")
    date_hierarchy = "time"
    fields = ("time", "actor", "actor_username", "action", "target_type", "target_id", "target_label", "detail", "ip")
    readonly_fields = fields
    list_select_related = ("actor",)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
