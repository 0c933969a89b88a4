"""corpus.permissions: the one place that decides who reads and writes which collection."""

import pytest

from corpus import permissions
from corpus.models import Collection, Document

pytestmark = pytest.mark.django_db


@pytest.fixture
def collections(user, other_user):
    mine = Collection.objects.create(slug="mine", name="Mine", owner=user)
    theirs = Collection.objects.create(slug="theirs", name="Theirs", owner=other_user)
    public = Collection.objects.create(slug="public", name="Public", owner=other_user, is_public=True)
    shared = Collection.objects.create(slug="shared", name="Shared", owner=other_user)
    shared.readers.add(user)
    edited = Collection.objects.create(slug="edited", name="Edited", owner=other_user)
    edited.editors.add(user)
    return {c.slug: c for c in (mine, theirs, public, shared, edited)}


def slugs(queryset):
    return sorted(queryset.values_list("slug", flat=True))


def test_user_reads_own_public_shared_and_edited(user, collections):
    assert slugs(permissions.readable_collections(user)) == ["edited", "mine", "public", "shared"]


def test_user_writes_only_own_and_edited(user, collections):
    assert slugs(permissions.writable_collections(user)) == ["edited", "mine"]
    assert permissions.can_write_collection(user, collections["mine"])
    assert not permissions.can_write_collection(user, collections["public"])


def test_staff_without_superuser_gets_no_extra_access(user, collections):
    user.is_staff = True
    user.save()
    assert "theirs" not in slugs(permissions.readable_collections(user))
    assert "theirs" not in slugs(permissions.writable_collections(user))


def test_superuser_reads_and_writes_everything(django_user_model, collections):
    root = django_user_model.objects.create_superuser(username="root", password="x-long-password-1")
    assert len(slugs(permissions.readable_collections(root))) == 5
    assert len(slugs(permissions.writable_collections(root))) == 5


def test_anonymous_and_inactive_users_read_nothing(user, collections):
    from django.contrib.auth.models import AnonymousUser

    assert slugs(permissions.readable_collections(AnonymousUser())) == []
    user.is_active = False
    user.save()
    assert slugs(permissions.readable_collections(user)) == []


def test_document_permissions_follow_the_collection(user, collections):
    hidden = Document.objects.create(collection=collections["theirs"], source="x.txt")
    visible = Document.objects.create(collection=collections["public"], source="y.txt")
    assert list(permissions.readable_documents(user)) == [visible]
    assert not permissions.can_read_document(user, hidden)
    assert permissions.can_read_document(user, visible) and not permissions.can_write_document(user, visible)


def rows_by_slug(rows):
    names = dict(Collection.objects.values_list("id", "slug"))
    return sorted((names[cid], chunker, model) for cid, chunker, model in rows)


def test_collection_rows_of_readable_collections_are_the_orm_rows_for_every_share(user, other_user, collections):
    # The fixed statement (one search's first read) against the ORM, for a user reading through
    # each kind of share: public, own, reader, editor, reader group, editor group.
    from django.contrib.auth.models import Group

    readers, editors = Group.objects.create(name="readers"), Group.objects.create(name="editors")
    user.groups.add(readers, editors)
    by_group = Collection.objects.create(slug="by-group", name="By group", owner=other_user,
                                         chunker=Collection.Chunker.SLIDING)
    by_group.reader_groups.add(readers)
    edited_by_group = Collection.objects.create(slug="edited-by-group", name="Edited by group", owner=other_user)
    edited_by_group.editor_groups.add(editors)
    for who in (user, other_user):
        readable = permissions.readable_collections(who)
        assert rows_by_slug(permissions.collection_rows(readable)) == rows_by_slug(
            Collection.objects.filter(pk__in=readable.values("pk")).values_list("id", "chunker", "embedding_model"))
    assert [slug for slug, _, _ in rows_by_slug(permissions.collection_rows(permissions.readable_collections(user)))] \
        == ["by-group", "edited", "edited-by-group", "mine", "public", "shared"]
    assert ("by-group", Collection.Chunker.SLIDING, by_group.embedding_model) in rows_by_slug(
        permissions.collection_rows(permissions.readable_collections(user)))


def test_collection_rows_read_a_derived_queryset_through_the_orm_with_its_filter(user, collections):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    readable = permissions.readable_collections(user)
    with CaptureQueriesContext(connection) as fixed:
        permissions.collection_rows(readable)
    assert len(fixed.captured_queries) == 1 and "ORDER BY" not in fixed.captured_queries[0]["sql"]
    narrowed = readable.filter(slug="shared")
    with CaptureQueriesContext(connection) as orm:
        rows = permissions.collection_rows(narrowed)
    assert rows_by_slug(rows) == [("shared", collections["shared"].chunker, collections["shared"].embedding_model)]
    assert '"corpus_collection"."slug"' in orm.captured_queries[0]["sql"]
    # Nobody's marker survives a derived queryset, and others' collections stay out.
    assert rows_by_slug(permissions.collection_rows(readable.exclude(slug="mine"))) == rows_by_slug(
        [r for r in permissions.collection_rows(readable) if r[0] != collections["mine"].pk])
    assert permissions.collection_rows(permissions.readable_collections(user).filter(slug="theirs")) == []
