from django.contrib import admin
from django.utils.html import format_html_join

from chat.models import Conversation, Feedback, Message


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    fields = ["role", "status", "mode", "content", "error", "query", "created_at"]
    readonly_fields = fields
    can_delete = False
    show_change_link = True


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ["__str__", "user", "source", "collection", "updated_at"]
    list_filter = ["source", "collection"]
    search_fields = ["title", "user__username"]
    raw_id_fields = ["user"]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["__str__", "conversation", "role", "status", "mode", "created_at"]
    list_filter = ["role", "status", "mode"]
    search_fields = ["content", "query"]
    raw_id_fields = ["conversation"]


@admin.register(Feedback)
class FeedbackAdmin(admin.ModelAdmin):
    """Rated answers. A reviewer can choose the source and evidence that make a rating an
    evaluation item (`manage.py export_feedback`); what the answer was made of stays as it was."""

    list_display = ["question", "rating", "source", "evidence_count", "user", "collection_slug", "created_at"]
    list_filter = ["rating", "collection_slug", "created_at"]
    search_fields = ["question", "query", "comment", "answer", "source"]
    date_hierarchy = "created_at"
    fields = ["rating", "user", "message", "question", "query", "comment", "source", "evidence", "kind",
              "answer", "error", "sources_given", "retrieved", "collection_slug", "created_at", "updated_at"]
    readonly_fields = ["rating", "user", "message", "answer", "error", "sources_given", "retrieved", "collection_slug",
                       "created_at", "updated_at"]

    @admin.display(description="evidence")
    def evidence_count(self, feedback: Feedback) -> int:
        return len(feedback.evidence)

    @admin.display(description="sources the answer was given (* cited)")
    def sources_given(self, feedback: Feedback):
        return format_html_join(
            "\n", "<p>[{}]{} <b>{}</b> <code>{}</code><br>{}</p>",
            ((c.get("n"), "*" if c.get("n") in feedback.cited else "", c["document"].get("title", ""),
              c["document"].get("source", ""), (c.get("text") or "")[:600]) for c in feedback.sources))

    def has_add_permission(self, request) -> bool:
        return False  # ratings come from the chat page
