"""Managing a conversation from the chat page: rename, delete, export as Markdown, share a
read-only link (and the page that link opens)."""

from __future__ import annotations

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST

from chat.export import conversation_markdown
from chat.markdown import link_citations, render_markdown
from chat.models import Conversation, Message
from chat.services import InvalidTitle, conversation_delete, conversation_rename
from chat.sharing import conversation_share, conversation_unshare, may_open
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


@require_POST
@login_required
def share(request: HttpRequest, pk: int) -> HttpResponse:
    conv = own_conversation(request, pk)
    conversation_share(conversation=conv)
    return redirect(f"{conv.get_absolute_url()}?share=1")


@require_POST
@login_required
def unshare(request: HttpRequest, pk: int) -> HttpResponse:
    conv = own_conversation(request, pk)
    conversation_unshare(conversation=conv)
    flash.success(request, "The link no longer works.")
    return redirect(conv.get_absolute_url())


@require_GET
@login_required
def shared(request: HttpRequest, token: str) -> HttpResponse:
    """A shared conversation, read-only: for users who may read every document it cites; others
    are told why they may not see it (403). An unknown or revoked link is a 404."""
    conv = get_object_or_404(Conversation.objects.select_related("user"), share_token=token)
    if not may_open(request.user, conv):
        return render(request, "chat/shared_refused.html", {"conversation": conv}, status=403)
    items = []
    for message in conv.messages.all():
        item = {"msg": message, "html": "", "sources": []}
        if message.role == Message.Role.ASSISTANT:
            anchors = {c["n"]: f"#m{message.pk}-s{c['n']}" for c in message.citations}
            item.update(html=link_citations(str(render_markdown(message.content)), anchors),
                        sources=sources_of(message))
        items.append(item)
    response = render(request, "chat/shared.html", {"conversation": conv, "items": items})
    response["X-Robots-Tag"] = "noindex"
    return response
