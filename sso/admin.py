from django.contrib import admin

from sso.models import Identity, ManagedGroup


@admin.register(Identity)
class IdentityAdmin(admin.ModelAdmin):
    """Read-only: identities are made by sign-in. Deleting one makes the next sign-in a new account."""

    list_display = ("user", "subject", "issuer", "created", "last_sign_in")
    search_fields = ("user__username", "subject")
    readonly_fields = ("user", "issuer", "subject", "created", "last_sign_in")

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(ManagedGroup)
class ManagedGroupAdmin(admin.ModelAdmin):
    """Deleting a row here hands the group back to staff: sign-in no longer removes anyone from it."""

    list_display = ("group", "created")
    readonly_fields = ("group", "created")

    def has_add_permission(self, request) -> bool:
        return False
