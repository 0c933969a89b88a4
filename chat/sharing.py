"""Read-only links to a conversation. A link opens only for users who may read every document its
answers cite (decided by corpus.permissions, like every other read); the owner can revoke it, and
a new link is a new secret."""

from __future__ import annotations

import secrets

from chat.models import Conversation, Message
from corpus.permissions import readable_documents

TOKEN_BYTES = 24


def conversation_share(*, conversation: Conversation) -> str:
    """The conversation's share token, created on first use."""
    if not conversation.share_token:
        conversation.share_token = secrets.token_urlsafe(TOKEN_BYTES)
        Conversation.objects.filter(pk=conversation.pk).update(share_token=conversation.share_token)
    return conversation.share_token


def conversation_unshare(*, conversation: Conversation) -> None:
    """Revoke the link: it stops working at once."""
    conversation.share_token = None
    Conversation.objects.filter(pk=conversation.pk).update(share_token=None)


def cited_document_ids(conversation: Conversation) -> set[int]:
    answers = conversation.messages.filter(role=Message.Role.ASSISTANT).values_list("citations", flat=True)
    return {c["document"]["id"] for citations in answers for c in citations or [] if c.get("document")}


def may_open(user, conversation: Conversation) -> bool:
    """Whether `user` may read every document cited in `conversation` (a deleted one counts as
    unreadable: nobody can check who may read it now)."""
    cited = cited_document_ids(conversation)
    return readable_documents(user).filter(pk__in=cited).count() == len(cited)
