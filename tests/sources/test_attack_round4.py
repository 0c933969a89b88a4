"""The attack round after issue 40's fixes: a document a source brought keeps its link to the
source when it is moved to another collection, so the source's owner (or any editor of the
source's collection) still deletes it there, where they have no rights at all."""

from __future__ import annotations

from unittest import mock

import pytest
from django.utils import timezone

from corpus.models import Collection, Document
from sources.models import Source, SourceDocument
from tests.chat.chat_corpus import make_document

pytestmark = pytest.mark.django_db


def test_deleting_a_source_does_not_delete_a_document_moved_out_of_its_collection(client_of, user, carol, dave):
    team = Collection.objects.create(slug="team", name="Team", owner=user)  # alice's; carol and dave edit it
    team.editors.add(carol, dave)
    carols = Collection.objects.create(slug="carols", name="Carol's", owner=carol)  # dave cannot read it
    source = Source.objects.create(collection=team, kind="url", url="https://docs.example.org/a.html",
                                   schedule="daily", next_sync_at=timezone.now(), created_by=user)
    page = make_document(team, source="https://docs.example.org/a.html", parts=["A page about deployment.\n"])
    SourceDocument.objects.create(source=source, document=page, key="https://docs.example.org/a.html")

    moved = client_of(carol).post(f"/api/documents/{page.pk}/move/", {"collection": "carols"}, format="json")
    assert moved.status_code == 200
    assert client_of(dave).get(f"/api/documents/{page.pk}/").status_code == 404  # out of dave's reach

    assert client_of(dave).delete(f"/api/sources/{source.pk}/").status_code == 204
    assert Document.objects.filter(pk=page.pk, collection=carols).exists()  # carol's document stays


def test_a_folder_swapped_for_a_link_after_the_check_is_refused(tmp_path):
    """read_file checks that the file's folder lies inside the source's folder, then opens the file
    by its path: a sub-folder replaced by a link to elsewhere in between (a race its writers can
    run at every sync) must not lead the open out of the folder."""
    from sources import folders

    folder = tmp_path / "shared" / "handbook"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "secret.md").write_text("# Inside\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.md").write_text("# Outside: hunter2\n")
    listed = folders.FolderFile(folder / "notes" / "secret.md", "notes/secret.md", 0, 0)
    real_resolve = folders.Path.resolve

    def swap_after_check(path, *args, **kwargs):
        resolved = real_resolve(path, *args, **kwargs)
        if path == folder / "notes":  # the check has looked: now the sub-folder becomes a link out
            (folder / "notes" / "secret.md").unlink()
            (folder / "notes").rmdir()
            (folder / "notes").symlink_to(outside)
        return resolved

    with mock.patch.object(folders.Path, "resolve", swap_after_check), pytest.raises(OSError):
        folders.read_file(listed, folder=folder.resolve())


def test_a_sites_content_type_reaches_the_sources_api_as_plain_text(client_of, user, settings, monkeypatch,
                                                                    django_capture_on_commit_callbacks):
    """A site's answer (here its Content-Type) ends up in the source's failures, which every reader of
    the collection lists at /api/sources/: like every other API text field, plain text."""
    from sources import services
    from sources.sync import source_sync
    from sources.web import pacing, robots
    from tests.sources.http_site import HttpSite, Page

    settings.SOURCES_ALLOW_PRIVATE = True
    monkeypatch.setattr(pacing, "HOST_INTERVAL", 0)
    robots.forget()
    team = Collection.objects.create(slug="team", name="Team", owner=user)
    with HttpSite() as site:
        site.pages["/x"] = Page(b"x", content_type="<img src=x onerror=alert(1)>")
        source = services.source_create(collection=team, kind="url", url=site.url("/x"), sync=False)
        with django_capture_on_commit_callbacks(execute=True):
            source_sync(source_id=source.pk)
    robots.forget()
    listed = client_of(user).get(f"/api/sources/{source.pk}/").json()
    assert listed["last_sync"]["failures"], listed
    assert "<img" not in str(listed["last_sync"]["failures"])


def test_deleting_an_editors_account_pauses_their_sources(user, carol):
    """A source with no owner is an operator's and always runs: an editor's source must not become
    one (syncing for ever, never paused) because their account was deleted rather than deactivated."""
    from sources.ownership import sources_pause_unwritable

    team = Collection.objects.create(slug="team", name="Team", owner=user)
    team.editors.add(carol)
    source = Source.objects.create(collection=team, kind="url", url="https://docs.example.org/", schedule="daily",
                                   next_sync_at=timezone.now(), created_by=carol)
    carol.delete()
    sources_pause_unwritable()
    source.refresh_from_db()
    assert source.created_by is None
    assert source.paused_reason.startswith("Paused: the account of carol")
    assert list(Source.objects.due(timezone.now())) == []
