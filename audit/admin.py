from django.contrib import admin
from django.http import HttpRequest

from audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read only: an audit trail nobody may edit or delete by hand (prune_audit does). It tells who did
    what across every collection, so not every staff member sees it: superusers, and staff given the
    "audit | audit event | Can view audit event" permission (Django's model permissions, the admin's
    own default for viewing)."""

    list_display = ("time", "actor_username", "action", "target_type", "target_label", "ip")
    list_filter = ("action", "time", ("actor", admin.RelatedOnlyFieldListFilter))
    search_fields = ("actor_username", "target_label", "target_id", "ip")
    date_hierarchy = "time"
    fields = ("time", "actor", "actor_username", "action", "target_type", "target_id", "target_label", "detail", "ip")
    readonly_fields = fields
    list_select_related = ("actor",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
