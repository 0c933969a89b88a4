"""The collection's sources page: readers see sources and their last sync, editors add, sync and
delete; bad input is shown on the form with a 400; strangers get 404."""

from __future__ import annotations

import pytest

from corpus.models import Collection
from sources.models import Source

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(user, other_user):
    collection = Collection.objects.create(slug="team", name="Team", owner=user)
    collection.readers.add(other_user)
    return collection


def signed_in(client, user):
    client.force_login(user)
    return client


def test_an_editor_adds_a_site_from_the_form(client, team, user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = signed_in(client, user).post("/sources/team/add/", {
            "kind": "site", "url": "https://docs.example.org/guide/", "schedule": "weekly", "max_pages": 20,
            "max_depth": 2, "tags": "docs, guide"})
    assert response.status_code == 302 and response.url == "/sources/team/"
    source = Source.objects.get()
    assert (source.kind, source.url, source.max_pages, source.tags) == (
        "site", "https://docs.example.org/guide/", 20, ["docs", "guide"])
    assert len(queued) == 1  # the first sync
    page = client.get("/sources/team/").content.decode()
    assert "https://docs.example.org/guide/" in page and "Sync now" in page and "Every week" in page


def test_bad_input_is_shown_on_the_form(client, team, user):
    response = signed_in(client, user).post("/sources/team/add/", {
        "kind": "url", "url": "javascript:alert(1)", "schedule": "daily", "max_pages": 10, "max_depth": 1})
    assert response.status_code == 400
    assert "not an http:// or https:// URL" in response.content.decode()
    assert not Source.objects.exists()


def test_the_folder_field_offers_only_the_allowed_folders(client, team, user, allowed_root, tmp_path):
    page = signed_in(client, user).get("/sources/team/").content.decode()
    assert str((allowed_root / "handbook").resolve()) in page
    response = client.post("/sources/team/add/", {"kind": "folder", "path": str(tmp_path), "schedule": "daily",
                                                  "max_pages": 10, "max_depth": 1})
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()


def test_without_allowed_folders_the_form_says_why_there_is_no_folder_kind(client, team, user, settings):
    settings.SOURCES_FOLDERS = []
    page = signed_in(client, user).get("/sources/team/").content.decode()
    assert 'value="folder"' not in page and 'value="site"' in page
    assert "Server folders are off: the operator lists them in SOURCES_FOLDERS." in page


def test_a_reader_sees_sources_but_no_forms_and_cannot_post(client, team, other_user):
    source = Source.objects.create(collection=team, kind="url", url="https://example.org/page", last_new=3,
                                   failures=[{"item": "https://example.org/page", "reason": "HTTP 500"}])
    page = signed_in(client, other_user).get("/sources/team/").content.decode()
    assert "https://example.org/page" in page and "3 new" in page and "HTTP 500" in page
    assert "Sync now" not in page and "Add a source" not in page
    assert client.post(f"/sources/source/{source.pk}/sync/").status_code == 403
    assert client.post(f"/sources/source/{source.pk}/delete/").status_code == 403
    assert client.post("/sources/team/add/", {"kind": "url", "url": "https://e.org/"}).status_code == 403
    assert Source.objects.filter(pk=source.pk).exists()


def test_a_source_without_documents_says_so_instead_of_an_empty_list(client, team, user):
    from corpus.models import Document
    from sources.models import SourceDocument

    empty = Source.objects.create(collection=team, kind="url", url="https://example.org/empty")
    one = Source.objects.create(collection=team, kind="url", url="https://example.org/one")
    document = Document.objects.create(collection=team, source="https://example.org/one", title="One")
    SourceDocument.objects.create(source=one, document=document, key=one.url)
    page = signed_in(client, user).get("/sources/team/").content.decode()
    cards = page.split('<article class="source"')[1:]
    by_url = {next(u for u in (empty.url, one.url) if u in card): card for card in cards}
    assert "No documents yet." in by_url[empty.url] and "<details" not in by_url[empty.url].split("</dl>")[1]
    assert "<summary>1 document</summary>" in by_url[one.url] and "No documents yet." not in by_url[one.url]
    assert "document(s)" not in page


def test_a_stranger_gets_404(client, team, django_user_model):
    stranger = django_user_model.objects.create_user(username="eve", password="eve-password-1")
    source = Source.objects.create(collection=team, kind="url", url="https://example.org/page")
    signed_in(client, stranger)
    assert client.get("/sources/team/").status_code == 404
    assert client.post(f"/sources/source/{source.pk}/sync/").status_code == 404


def row_classes(page: str) -> dict[str, set[str]]:
    """Each form field's row classes, by the field's name (from its input's id="id_NAME")."""
    import re

    rows = re.findall(r'<p(?: class="([^"]*)")?>\s*<label for="id_(\w+)"', page)
    return {name: set(classes.split()) for classes, name in rows}


def test_each_fields_row_names_the_kinds_it_belongs_to(client, team, user, allowed_root):
    page = signed_in(client, user).get("/sources/team/").content.decode()
    assert row_classes(page) == {
        "kind": set(), "url": {"of-kind", "for-url", "for-site"}, "path": {"of-kind", "for-folder"},
        "schedule": set(), "max_pages": {"of-kind", "for-site", "for-folder"},
        "max_depth": {"of-kind", "for-site"}, "tags": set()}


def test_the_fields_of_other_kinds_are_ignored(client, team, user, allowed_root):
    # Left in the hidden fields of another kind: a bad number, an empty one, a folder.
    folder = str((allowed_root / "handbook").resolve())
    response = signed_in(client, user).post("/sources/team/add/", {
        "kind": "url", "url": "https://example.org/page", "schedule": "daily", "max_pages": "",
        "max_depth": "many", "path": folder})
    assert response.status_code == 302
    page = Source.objects.get()
    assert (page.kind, page.url, page.path, page.max_pages, page.max_depth) == (
        "url", "https://example.org/page", "", 100, 3)
    response = client.post("/sources/team/add/", {
        "kind": "folder", "path": folder, "url": "https://example.org/left-over", "schedule": "daily",
        "max_pages": 7, "max_depth": "many"})
    assert response.status_code == 302
    files = Source.objects.get(kind="folder")
    assert (files.url, files.path, files.max_pages) == ("", folder, 7)


def test_a_kinds_own_fields_are_still_checked(client, team, user):
    response = signed_in(client, user).post("/sources/team/add/", {
        "kind": "site", "url": "https://example.org/", "schedule": "daily", "max_pages": 10, "max_depth": "many"})
    assert response.status_code == 400 and "Enter a whole number." in response.content.decode()
    assert not Source.objects.exists()


def test_hostile_failure_reasons_and_items_are_shown_as_text(client, team, other_user):
    """What a remote server or a file name put in a sync's failures cannot run script on the page."""
    from tests.chat.test_views import assert_inert

    Source.objects.create(collection=team, kind="site", url="https://docs.example.org/", schedule="none",
                          state="failed", error="<script>alert(1)</script>", last_failed=1,
                          failures=[{"item": "https://docs.example.org/<img src=x onerror=alert(2)>",
                                     "reason": "<a href=javascript:alert(3)>x</a>"}])
    html = signed_in(client, other_user).get("/sources/team/").content.decode()
    assert_inert(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "onerror=alert(2)&gt;" in html


def test_sync_now_on_the_page_shares_the_apis_budget(client, team, user, monkeypatch):
    from django.core.cache import caches

    from sources.quotas import SyncNowQuota

    monkeypatch.setattr(SyncNowQuota, "rate", "2/hour")
    caches["quotas"].clear()
    source = Source.objects.create(collection=team, kind="url", url="https://e.org/", schedule="none")
    signed_in(client, user)
    assert client.post(f"/sources/source/{source.pk}/sync/").status_code == 302
    Source.objects.filter(pk=source.pk).update(state="idle")
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(user)
    assert api.post(f"/api/sources/{source.pk}/sync/").status_code == 202
    Source.objects.filter(pk=source.pk).update(state="idle")
    refused = client.post(f"/sources/source/{source.pk}/sync/", follow=True)
    assert "You asked for many syncs lately" in refused.content.decode()
    assert Source.objects.get(pk=source.pk).state == "idle"  # not queued
    caches["quotas"].clear()


def test_the_source_quota_is_shown_on_the_form(client, team, user, monkeypatch):
    from sources import quotas

    monkeypatch.setattr(quotas, "MAX_SOURCES_PER_USER", 1)
    Source.objects.create(collection=team, kind="url", url="https://e.org/", schedule="none", created_by=user)
    response = signed_in(client, user).post("/sources/team/add/", {
        "kind": "url", "url": "https://e.org/other", "schedule": "daily", "max_pages": 10, "max_depth": 1})
    assert response.status_code == 400 and "the most one person may keep" in response.content.decode()
    assert Source.objects.count() == 1
