"""The sources admin: staff add a folder source (chosen from SOURCES_FOLDERS), see its last sync,
and sync it now; a path outside the allowed folders is refused; others' sources stay hidden."""

from __future__ import annotations

import pytest

from corpus.models import Collection
from sources.models import Source
from tests.sources.helpers import write

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user(username="sam", password="sam-password-1", is_staff=True)


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


def test_staff_add_a_folder_source_and_sync_it_now(staff_client, staff, allowed_root, eager_media,
                                                   django_capture_on_commit_callbacks):
    write(allowed_root / "handbook" / "a.md", "# A\n\nThe anchor is red.\n")
    collection = Collection.objects.create(slug="harbour", name="Harbour", owner=staff)
    handbook = str((allowed_root / "handbook").resolve())
    response = staff_client.post("/admin/sources/source/add/", {
        "collection": collection.pk, "kind": "folder", "url": "", "path": handbook, "schedule": "none",
        "max_pages": 100, "max_depth": 3, "tags_text": "hb, ships"})
    assert response.status_code == 302, response.content.decode()[:3000]
    source = Source.objects.get()
    assert (source.path, source.tags, source.created_by) == (handbook, ["hb", "ships"], staff)

    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post("/admin/sources/source/", {"action": "sync_now", "_selected_action": [source.pk]})
    assert response.status_code == 302
    source.refresh_from_db()
    assert source.last_new == 1 and source.links.count() == 1
    listing = staff_client.get("/admin/sources/source/").content.decode()
    assert "1 / 0 / 0 / 0" in listing


def test_a_path_outside_the_allowed_folders_is_refused(staff_client, staff, allowed_root):
    collection = Collection.objects.create(slug="harbour", name="Harbour", owner=staff)
    response = staff_client.post("/admin/sources/source/add/", {
        "collection": collection.pk, "kind": "folder", "path": "/etc", "schedule": "none", "max_pages": 100,
        "max_depth": 3})
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert not Source.objects.exists()


def test_staff_do_not_see_sources_of_collections_they_cannot_read(staff_client, user):
    other = Collection.objects.create(slug="private", name="Private", owner=user)
    Source.objects.create(collection=other, kind="url", url="https://example.org/secret-place")
    page = staff_client.get("/admin/sources/source/").content.decode()
    assert "secret-place" not in page


def test_a_change_with_bad_tags_is_shown_on_the_form(staff_client, staff):
    collection = Collection.objects.create(slug="harbour", name="Harbour", owner=staff)
    source = Source.objects.create(collection=collection, kind="url", url="https://example.org/", schedule="none")
    response = staff_client.post(f"/admin/sources/source/{source.pk}/change/", {
        "schedule": "daily", "max_pages": 10, "max_depth": 1, "tags_text": "x" * 70})
    assert response.status_code == 200
    assert "A tag is at most 64 characters." in response.content.decode()
    source.refresh_from_db()
    assert (source.schedule, source.tags) == ("none", [])
