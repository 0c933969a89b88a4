from django.contrib import admin

from accounts.models import ApiToken
from accounts.services import token_revoke, token_update


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens can be seen, changed and revoked here, never read back: only the hash is stored. Every
    change and revocation is audited, as on the Tokens page."""

    list_display = ("name", "user", "prefix", "read_only", "created", "last_used", "expires")
    search_fields = ("name", "user__username", "prefix")
    readonly_fields = ("user", "key_hash", "prefix", "created", "last_used")
    fields = ("user", "name", "prefix", "key_hash", "read_only", "created", "last_used", "expires")

    def has_add_permission(self, request) -> bool:
        return False  # a key must be shown to its owner once: the Tokens page or drf_create_token

    def save_model(self, request, obj: ApiToken, form, change: bool) -> None:
        # `obj` already holds the form's values: the service reads the row as it was, then saves.
        token_update(token_id=obj.pk, name=obj.name, read_only=obj.read_only, expires=obj.expires, request=request)

    def delete_model(self, request, obj: ApiToken) -> None:
        token_revoke(user=obj.user, token_id=obj.pk, request=request)  # audited, as on the Tokens page

    def delete_queryset(self, request, queryset) -> None:
        for token in queryset.select_related("user"):
            token_revoke(user=token.user, token_id=token.pk, request=request)
