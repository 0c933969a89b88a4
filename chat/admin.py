from django.contrib import admin

from chat.models import Conversation, Message


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    fields = ["role", "status", "mode", "content", "error", "query", "created_at"]
    readonly_fields = fields
    can_delete = False
    show_change_link = True


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ["__str__", "user", "collection", "updated_at"]
    list_filter = ["collection"]
    search_fields = ["title", "user__username"]
    raw_id_fields = ["user"]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["__str__", "conversation", "role", "status", "mode", "created_at"]
    list_filter = ["role", "status", "mode"]
    search_fields = ["content", "query"]
    raw_id_fields = ["conversation"]
