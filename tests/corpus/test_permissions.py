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
