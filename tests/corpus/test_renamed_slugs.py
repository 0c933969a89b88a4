"""A renamed collection keeps its old slug: no other user can take it, and the old slug (a stored
conversation, a /v1 client's model name) still reaches that collection and no other."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from rest_framework.test import APIClient

from chat.services import conversation_start, message_ask, message_regenerate
from corpus import permissions, services
from corpus.models import SLUG_UNAVAILABLE, Collection, CollectionSlug
from tests.chat.chat_corpus import COOKING, GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db
QUESTION = "What is the default request timeout?"


@pytest.fixture
def renamed(user, other_user):
    """alice's collection "guides", shared with bob, renamed to "handbook"."""
    collection = services.collection_create(owner=user, name="Guides", slug="guides")
    collection.readers.add(other_user)
    make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)
    return services.collection_update(collection=collection, slug="handbook")


def test_a_renamed_slug_cannot_be_taken(renamed, other_user):
    with pytest.raises(ValidationError) as refused:
        services.collection_create(owner=other_user, name="Phish", slug="guides")
    assert refused.value.message_dict == {"slug": [SLUG_UNAVAILABLE]}
    other = services.collection_create(owner=other_user, name="Other", slug="other")
    with pytest.raises(ValidationError):
        services.collection_update(collection=other, slug="guides")
    assert set(Collection.objects.values_list("slug", flat=True)) == {"handbook", "other"}


def test_the_old_slug_finds_the_renamed_collection_for_its_readers_only(renamed, user, other_user,
                                                                         django_user_model):
    assert permissions.collection_for(user, "guides") == renamed
    assert permissions.collection_for(other_user, "guides") == renamed
    stranger = django_user_model.objects.create_user(username="mallory", password="x-password-1")
    with pytest.raises(permissions.Denied):
        permissions.collection_for(stranger, "guides")


def test_an_owner_can_take_back_an_old_slug(renamed):
    services.collection_update(collection=renamed, slug="guides")
    assert list(CollectionSlug.objects.values_list("slug", "collection")) == [("handbook", renamed.pk)]
    assert Collection.objects.get().slug == "guides"


def test_the_api_refuses_an_old_slug_like_any_taken_one(renamed, other_user):
    client = APIClient()
    client.force_authenticate(other_user)
    response = client.post("/api/collections/", {"name": "Phish", "slug": "guides"}, format="json")
    assert response.status_code == 400 and response.json() == {"slug": [SLUG_UNAVAILABLE]}


def test_regenerate_searches_the_collection_by_id_not_by_its_old_slug(user, other_user, no_llm):
    """Even if the old slug came free and another user's collection (shared with the asker) took
    it, a stored answer is regenerated from the collection it searched."""
    guides = make_collection("guides", owner=user)
    make_document(guides, source="deploy.md", title="Deployment guide", parts=GUIDE)
    conversation = conversation_start(user=user, collection=guides)
    old = list(message_ask(conversation=conversation, question=QUESTION, collection_slug="guides",
                           stream=False))[-1].message
    services.collection_update(collection=guides, slug="handbook")
    CollectionSlug.objects.all().delete()  # as if the old slug had been freed
    phish = make_collection("guides", owner=other_user)
    phish.readers.add(user)
    make_document(phish, source="phish.md", parts=COOKING)

    new = list(message_regenerate(message=old, stream=False))[-1].message
    assert {c["document"]["source"] for c in new.citations} == {"deploy.md"}
    assert new.collection_id == guides.pk and new.collection_slug == "handbook"


def test_regenerate_refuses_when_the_collection_is_gone(user, other_user, no_llm):
    guides = make_collection("guides", owner=user)
    make_document(guides, source="deploy.md", title="Deployment guide", parts=GUIDE)
    old = list(message_ask(conversation=conversation_start(user=user), question=QUESTION, collection_slug="guides",
                           stream=False))[-1].message
    services.collection_delete(collection=guides)
    phish = make_collection("guides", owner=other_user, public=True)
    make_document(phish, source="phish.md", parts=COOKING)
    old.refresh_from_db()
    with pytest.raises(permissions.Denied, match="is gone"):
        next(message_regenerate(message=old, stream=False))


def test_ingest_into_an_old_slug_reaches_the_renamed_collection(renamed):
    assert services.collection_get_or_create(slug="guides") == renamed
    assert Collection.objects.count() == 1
