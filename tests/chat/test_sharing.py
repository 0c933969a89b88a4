"""Read-only links to a conversation: only users who may read every cited document open them."""

import re

import pytest
from django.urls import reverse

from chat.services import conversation_start, message_ask
from chat.sharing import cited_document_ids, may_open
from corpus.models import Document
from tests.chat.chat_corpus import COOKING, GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def shared(client, user, other_user, no_llm):
    """Alice's conversation citing her "guides" and "kitchen" collections, shared; returns its link."""
    guides = make_collection("guides", owner=user)
    make_document(guides, source="deploy.md", title="Deployment guide", parts=GUIDE)
    kitchen = make_collection("kitchen", owner=user)
    make_document(kitchen, source="bread.md", title="Bread", parts=COOKING)
    conversation = conversation_start(user=user)
    for question, slug in (("What is the default request timeout?", "guides"), ("How long do I knead the dough?",
                                                                                 "kitchen")):
        list(message_ask(conversation=conversation, question=question, collection_slug=slug, stream=False))
    client.force_login(user)
    response = client.post(reverse("chat:share", args=[conversation.pk]))
    assert response.status_code == 302 and response["Location"] == f"{conversation.get_absolute_url()}?share=1"
    conversation.refresh_from_db()
    page = client.get(response["Location"]).content.decode()
    link = re.search(r'class="share-link" readonly value="http://testserver(/shared/[\w-]+/)"', page).group(1)
    assert '<details class="popover share" open>' in page
    client.logout()
    return {"conversation": conversation, "link": link, "guides": guides, "kitchen": kitchen}


def test_a_reader_of_every_cited_collection_sees_it_read_only(client, other_user, shared):
    shared["guides"].readers.add(other_user)
    shared["kitchen"].is_public = True
    shared["kitchen"].save()
    client.force_login(other_user)
    response = client.get(shared["link"])
    html = response.content.decode()
    assert response.status_code == 200 and response["X-Robots-Tag"] == "noindex"
    assert "Shared by alice · read-only" in html
    assert "What is the default request timeout?" in html and "thirty seconds by default" in html
    assert re.search(r'<a class="cite" href="#m\d+-s\d+"', html)  # citations point into the page
    assert 'id="ask-form"' not in html and "regenerate" not in html and "thumb" not in html


def test_a_user_missing_one_collection_is_refused_clearly(client, other_user, shared):
    shared["guides"].readers.add(other_user)  # but not the kitchen
    client.force_login(other_user)
    response = client.get(shared["link"])
    html = response.content.decode()
    assert response.status_code == 403
    assert "You may not open this conversation" in html and "cite documents" in html
    assert "thirty seconds" not in html and "knead" not in html.lower()


def test_a_deleted_cited_document_closes_the_link(client, other_user, shared):
    shared["guides"].readers.add(other_user)
    shared["kitchen"].readers.add(other_user)
    client.force_login(other_user)
    assert client.get(shared["link"]).status_code == 200
    Document.objects.filter(source="bread.md").delete()
    assert client.get(shared["link"]).status_code == 403


def test_revoking_the_link_and_sharing_again_makes_a_new_one(client, user, other_user, shared):
    conversation = shared["conversation"]
    shared["kitchen"].is_public = shared["guides"].is_public = True
    shared["kitchen"].save()
    shared["guides"].save()
    client.force_login(other_user)
    assert client.get(shared["link"]).status_code == 200
    assert client.post(reverse("chat:unshare", args=[conversation.pk])).status_code == 404  # not theirs
    client.force_login(user)
    response = client.post(reverse("chat:unshare", args=[conversation.pk]), follow=True)
    assert "The link no longer works." in response.content.decode()
    client.force_login(other_user)
    assert client.get(shared["link"]).status_code == 404
    client.force_login(user)
    client.post(reverse("chat:share", args=[conversation.pk]))
    conversation.refresh_from_db()
    assert conversation.share_token and conversation.share_token not in shared["link"]


def test_the_link_needs_an_account(client, shared):
    response = client.get(shared["link"])
    assert response.status_code == 302 and response["Location"].startswith("/login/?next=/shared/")


def test_only_the_owner_shares(client, other_user, shared):
    client.force_login(other_user)
    assert client.post(reverse("chat:share", args=[shared["conversation"].pk])).status_code == 404


def test_may_open_counts_every_cited_document(user, other_user, shared):
    conversation = shared["conversation"]
    assert len(cited_document_ids(conversation)) == 2
    assert may_open(user, conversation) and not may_open(other_user, conversation)
    empty = conversation_start(user=user)
    assert may_open(other_user, empty)  # nothing cited, nothing to hide


def test_a_hostile_answer_and_passage_cannot_run_script_in_the_shared_page(client, other_user, shared):
    """The shared page shows one user's stored answer to another: every piece of it is escaped or
    sanitised (review round 3)."""
    from chat.models import Message
    from tests.chat.test_views import assert_inert

    shared["guides"].readers.add(other_user)
    shared["kitchen"].readers.add(other_user)
    reply = Message.objects.filter(conversation=shared["conversation"], role="assistant").first()
    hostile = '<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3)) [1]'
    reply.content = f"Timeout {hostile}"
    reply.citations = [{**c, "text": f"{c['text']} {hostile}"} for c in reply.citations]
    reply.save()
    Document.objects.filter(pk=reply.citations[0]["document"]["id"]).update(title='<b onmouseover="alert(4)">T</b>')
    client.force_login(other_user)
    html = client.get(shared["link"]).content.decode()
    assert_inert(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the passage text, shown as text
