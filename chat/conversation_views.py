"""Managing a conversation from the chat page: rename, delete, export as Markdown."""

from __future__ import annotations

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST

from chat.export import conversation_markdown
from chat.models import Message
from chat.services import InvalidTitle, conversation_delete, conversation_rename
from chat.views import own_conversation, sources_of


@require_POST
@login_required
def rename(request: HttpRequest, pk: int) -> HttpResponse:
    conv = own_conversation(request, pk)
    try:
        conversation_rename(conversation=conv, title=request.POST.get("title", ""))
    except InvalidTitle as exc:
        flash.error(request, str(exc))
    return redirect(conv.get_absolute_url())


@require_POST
@login_required
def delete(request: HttpRequest, pk: int) -> HttpResponse:
    conv = own_conversation(request, pk)
    title = str(conv)
    conversation_delete(conversation=conv)
    flash.success(request, f"Deleted the conversation “{title}”.")
    return redirect("chat:index")


@require_GET
@login_required
def export(request: HttpRequest, pk: int) -> HttpResponse:
    """The conversation as a Markdown file, each answer with its sources (linked to the passages)."""
    conv = own_conversation(request, pk)
    items = [(m, sources_of(m) if m.role == Message.Role.ASSISTANT else []) for m in conv.messages.all()]
    text = conversation_markdown(conv, items, absolute=request.build_absolute_uri)
    response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    name = slugify(str(conv))[:60].strip("-") or f"conversation-{conv.pk}"
    response["Content-Disposition"] = f'attachment; filename="{name}.md"'
    return response
