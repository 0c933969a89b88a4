"""The chat admin: conversations, messages and ratings. Like the corpus admin, every list and page
goes through corpus.permissions: staff see their own (own_records), a superuser everyone's; the
collection filter offers only collections the user may read.

Conversations and messages are read-only here, whatever the model permissions say: they are what
was asked and answered, written by the chat alone (an edit could re-point a message or a
conversation at someone else's). A whole conversation may still be deleted; a single message not
(the conversation would no longer be what was said)."""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html_join

from chat.models import Conversation, Feedback, Message
from corpus import permissions
from corpus.admin import PermittedCollectionFilter


class _OwnRecords:
    user_field = "user"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return permissions.own_records(request.user, super().get_queryset(request), user_field=self.user_field)


class _ReadOnly:
    """Viewed, never added or changed in the admin (has_view_permission still follows the model
    permissions: Django grants viewing to whoever has view or change permission)."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class MessageInline(_ReadOnly, admin.TabularInline):
    model = Message
    extra = 0
    fields = ["role", "status", "mode", "content", "error", "query", "created_at"]
    readonly_fields = fields
    can_delete = False
    show_change_link = True


@admin.register(Conversation)
class ConversationAdmin(_ReadOnly, _OwnRecords, admin.ModelAdmin):
    list_display = ["__str__", "user", "source", "collection", "updated_at"]
    list_filter = ["source", ("collection", PermittedCollectionFilter)]
    search_fields = ["title", "user__username"]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(_ReadOnly, _OwnRecords, admin.ModelAdmin):
    user_field = "conversation__user"

    list_display = ["__str__", "conversation", "role", "status", "mode", "created_at"]
    list_filter = ["role", "status", "mode"]
    search_fields = ["content", "query"]

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Feedback)
class FeedbackAdmin(_OwnRecords, admin.ModelAdmin):
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
