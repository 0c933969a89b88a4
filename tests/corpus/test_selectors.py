"""corpus.selectors: the one document list query and username look-ups, against the real database."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from corpus import selectors
from corpus.models import Chunk, Collection, Document

pytestmark = pytest.mark.django_db


@pytest.fixture
def collections(user, other_user):
    mine = Collection.objects.create(slug="mine", name="Mine", owner=user)
    theirs = Collection.objects.create(slug="theirs", name="Theirs", owner=other_user)
    shared = Collection.objects.create(slug="shared", name="Shared", owner=other_user)
    shared.readers.add(user)
    return {c.slug: c for c in (mine, theirs, shared)}


def make(collection, source, *, title="", status=Document.Status.READY, chunks=0):
    document = Document.objects.create(collection=collection, source=source, title=title, status=status,
                                       text="x" * max(chunks, 1))
    Chunk.objects.bulk_create(Chunk(document=document, chunk_index=i, text="x", start=i, end=i + 1)
                              for i in range(chunks))
    return document


def sources(documents):
    return [d.source for d in documents]


def test_document_list_is_readable_documents_newest_first_with_chunk_counts(user, collections):
    first = make(collections["mine"], "a.md", chunks=3)
    make(collections["theirs"], "hidden.md")
    make(collections["shared"], "b.md")
    make(collections["mine"], "c.md")

    documents = list(selectors.document_list(user=user))

    assert sources(documents) == ["c.md", "b.md", "a.md"]
    assert next(d for d in documents if d.pk == first.pk).chunk_count == 3


def test_document_list_filters_by_collection_status_and_words_of_title_or_source(user, collections):
    make(collections["mine"], "guides/garden.md", title="Tomato guide")
    make(collections["mine"], "notes/pests.md", title="Aphids", status=Document.Status.FAILED)
    make(collections["shared"], "shared/garden-plan.md", title="Plan")

    assert sources(selectors.document_list(user=user, collection=collections["mine"])) == [
        "notes/pests.md", "guides/garden.md"]
    assert sources(selectors.document_list(user=user, status="failed")) == ["notes/pests.md"]
    assert sources(selectors.document_list(user=user, search="GARDEN")) == ["shared/garden-plan.md",
                                                                             "guides/garden.md"]
    assert sources(selectors.document_list(user=user, search="tomato garden")) == ["guides/garden.md"]
    assert sources(selectors.document_list(user=user, search="aphids", status="ready")) == []
    assert sources(selectors.document_list(user=user, search="  ")) == sources(selectors.document_list(user=user))


def test_document_list_never_shows_an_unreadable_collection_even_when_asked(user, collections):
    make(collections["theirs"], "secret.md", title="Secret")

    assert list(selectors.document_list(user=user, collection=collections["theirs"])) == []
    assert list(selectors.document_list(user=user, search="secret")) == []


def test_users_by_username_keeps_order_and_names_no_unknown_one(user, other_user, django_user_model):
    django_user_model.objects.create_user(username="gone", is_active=False)

    assert selectors.users_by_username(["bob", " alice", "", "bob"]) == [other_user, user]
    for typed in (["alice", "nobody"], ["alice", "gone"], ["x" * 20_000]):  # unknown and inactive alike
        with pytest.raises(ValidationError) as unknown:
            selectors.users_by_username(typed)
        assert unknown.value.messages == [selectors.NOT_SHAREABLE_PEOPLE]
    with pytest.raises(ValidationError) as many:
        selectors.groups_by_name([f"team{i}" for i in range(25)])
    assert many.value.messages == [selectors.NOT_SHAREABLE_GROUPS]


def test_upload_target_is_the_viewed_writable_collection_or_the_only_one(user, other_user, collections):
    assert selectors.upload_target(user=user, viewing=None) == collections["mine"]  # the only writable one
    assert selectors.upload_target(user=user, viewing=collections["mine"]) == collections["mine"]
    assert selectors.upload_target(user=user, viewing=collections["shared"]) is None  # read-only: never another

    team = Collection.objects.create(slug="team", name="Team", owner=other_user)
    team.editors.add(user)
    assert selectors.upload_target(user=user, viewing=None) is None  # several: the user chooses
    assert selectors.upload_target(user=user, viewing=team) == team
