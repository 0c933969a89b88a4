"""The chat admin goes through corpus.permissions: staff see their own conversations, messages and
ratings (and a collection filter of collections they may read); a superuser sees everyone's."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from chat.feedback import feedback_rate
from chat.services import conversation_start, message_ask
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(django_user_model):
    staffer = django_user_model.objects.create_user(username="staffer", password="staff-password-1", is_staff=True)
    staffer.user_permissions.set(Permission.objects.filter(content_type__app_label="chat",
                                                           codename__startswith="view_"))
    return staffer


@pytest.fixture
def private_answer(user, no_llm):
    """alice's rated answer from her private collection "alice-secrets"."""
    collection = make_collection("alice-secrets", owner=user)
    make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)
    conversation = conversation_start(user=user, collection=collection)
    conversation.title = "Alice asks about timeouts"
    conversation.save()
    reply = list(message_ask(conversation=conversation, question="What is the default request timeout?",
                             collection_slug="alice-secrets", stream=False))[-1].message
    feedback_rate(message=reply, user=user, rating="down")
    return reply


def test_staff_see_only_their_own_chat_records(client, staff, private_answer):
    client.force_login(staff)
    for path in ("/admin/chat/conversation/", "/admin/chat/message/", "/admin/chat/feedback/"):
        page = client.get(path)
        text = page.content.decode()
        assert page.status_code == 200, path
        assert "Alice asks" not in text and "timeout" not in text.lower(), path
        assert "alice-secrets" not in text and "Alice Secrets" not in text, path  # nor in the filters
    conversation = private_answer.conversation
    assert client.get(f"/admin/chat/conversation/{conversation.pk}/change/").status_code == 302  # not found
    assert client.get(f"/admin/chat/message/{private_answer.pk}/change/").status_code == 302
    feedback = private_answer.feedback
    assert client.get(f"/admin/chat/feedback/{feedback.pk}/change/").status_code == 302


def test_a_superuser_sees_every_users_records(client, django_user_model, private_answer):
    client.force_login(django_user_model.objects.create_superuser(username="root", password="root-password-1"))
    assert "Alice asks" in client.get("/admin/chat/conversation/").content.decode()
    page = client.get(f"/admin/chat/feedback/{private_answer.feedback.pk}/change/").content.decode()
    assert "thirty seconds" in page


@pytest.fixture
def editor_staff(django_user_model):
    """Staff given every chat model permission (change included)."""
    staffer = django_user_model.objects.create_user(username="editor", password="editor-password-1", is_staff=True)
    staffer.user_permissions.set(Permission.objects.filter(content_type__app_label="chat"))
    return staffer


def test_conversations_and_messages_are_read_only_even_with_change_permissions(client, editor_staff,
                                                                               private_answer):
    """Review round 4: staff with the change permissions could re-point their own message or
    conversation at another user's conversation (and read it through their own)."""
    conversation = conversation_start(user=editor_staff, collection=None)
    mine = conversation.messages.create(role="user", content="my question")
    client.force_login(editor_staff)
    page = client.get(f"/admin/chat/message/{mine.pk}/change/")
    assert page.status_code == 200 and 'name="conversation"' not in page.content.decode()  # shown, not a field
    response = client.post(f"/admin/chat/message/{mine.pk}/change/",
                           {"conversation": private_answer.conversation_id, "role": "user", "content": "x"})
    assert response.status_code == 403
    response = client.post(f"/admin/chat/conversation/{conversation.pk}/change/",
                           {"user": private_answer.conversation.user_id, "title": "taken"})
    assert response.status_code == 403
    assert client.post(f"/admin/chat/message/{mine.pk}/delete/", {"post": "yes"}).status_code == 403
    assert client.get("/admin/chat/message/add/").status_code == 403
    mine.refresh_from_db()
    conversation.refresh_from_db()
    assert (mine.conversation_id, mine.content) == (conversation.pk, "my question")
    assert conversation.user_id == editor_staff.pk and conversation.title != "taken"
