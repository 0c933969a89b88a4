"""/api/sources/: add, list, show, change, delete and sync sources; who may do what; bad input is a
400 naming the problem."""

from __future__ import annotations

import pytest

from corpus.models import Collection, Document
from sources.models import MAX_PAGES_LIMIT, Source
from tests.sources.helpers import allow_folders, write

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(user, other_user, carol) -> Collection:
    """alice's collection, read by bob and edited by carol (dave is a stranger)."""
    collection = Collection.objects.create(slug="team", name="Team", owner=user)
    collection.readers.add(other_user)
    collection.editors.add(carol)
    return collection


@pytest.fixture
def folder(client_of, allowed_root, team, user, django_capture_on_commit_callbacks):
    write(allowed_root / "handbook" / "a.md", "# A\n\nalpha\n")
    write(allowed_root / "handbook" / "b.md", "# B\n\nbeta\n")
    response = client_of(user).post("/api/sources/", {"collection": "team", "kind": "folder", "path": "handbook",
                                                      "schedule": "none", "tags": ["hb"]}, format="json")
    assert response.status_code == 201, response.json()
    return Source.objects.get(pk=response.json()["id"])


def test_an_editor_adds_a_folder_and_syncs_it(client_of, allowed_root, team, carol, eager_media,
                                              django_capture_on_commit_callbacks):
    write(allowed_root / "handbook" / "a.md", "# A\n\nalpha\n")
    allow_folders(carol)
    client = client_of(carol)
    created = client.post("/api/sources/", {"collection": "team", "kind": "folder", "path": "handbook",
                                            "schedule": "weekly", "tags": ["hb"]}, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["path"] == str((allowed_root / "handbook").resolve())
    assert (body["kind"], body["schedule"], body["tags"], body["created_by"]) == ("folder", "weekly", ["hb"], "carol")

    with django_capture_on_commit_callbacks(execute=True):  # the sync runs (eagerly) after the commit
        synced = client.post(f"/api/sources/{body['id']}/sync/")
    assert synced.status_code == 202, synced.json()
    assert synced.json()["url"] == synced["Location"] == f"/api/sources/{body['id']}/"
    shown = client.get(synced.json()["url"]).json()
    counts = {name: shown["last_sync"][name] for name in ("new", "changed", "unchanged", "removed", "failed")}
    assert counts == {"new": 1, "changed": 0, "unchanged": 0, "removed": 0, "failed": 0}
    assert shown["document_count"] == 1 and shown["state"] == "idle"
    assert shown["next_sync_at"] is not None
    document = Document.objects.get(collection=team)
    assert document.source == "handbook/a.md" and document.metadata.get("tags") == ["hb"]

    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/api/sources/{body['id']}/sync/").status_code == 202
    shown = client.get(f"/api/sources/{body['id']}/").json()
    assert (shown["last_sync"]["new"], shown["last_sync"]["unchanged"]) == (0, 1)


def test_a_reader_sees_sources_but_cannot_add_change_sync_or_delete(client_of, folder, other_user):
    client = client_of(other_user)
    assert [s["id"] for s in client.get("/api/sources/").json()["results"]] == [folder.pk]
    assert client.get(f"/api/sources/{folder.pk}/").status_code == 200
    added = client.post("/api/sources/", {"collection": "team", "kind": "url", "url": "https://example.org/"},
                        format="json")
    assert added.status_code == 403
    assert client.patch(f"/api/sources/{folder.pk}/", {"schedule": "daily"}, format="json").status_code == 403
    assert client.post(f"/api/sources/{folder.pk}/sync/").status_code == 403
    assert client.delete(f"/api/sources/{folder.pk}/").status_code == 403
    assert Source.objects.filter(pk=folder.pk, schedule="none").exists()


def test_a_stranger_gets_404_everywhere(client_of, folder, dave):
    client = client_of(dave)
    assert client.get("/api/sources/").json()["results"] == []
    for response in (client.get(f"/api/sources/{folder.pk}/"),
                     client.patch(f"/api/sources/{folder.pk}/", {"schedule": "daily"}, format="json"),
                     client.post(f"/api/sources/{folder.pk}/sync/"),
                     client.delete(f"/api/sources/{folder.pk}/"),
                     client.post("/api/sources/", {"collection": "team", "kind": "url", "url": "https://e.org/"},
                                 format="json")):
        assert response.status_code == 404, response.json()
    assert Source.objects.filter(pk=folder.pk).exists()


def test_change_tags_applies_them_to_the_documents(client_of, folder, user, django_capture_on_commit_callbacks):
    from sources.sync import source_sync

    source_sync(source_id=folder.pk)
    response = client_of(user).patch(f"/api/sources/{folder.pk}/", {"tags": ["handbook", "2026"],
                                                                    "max_pages": 5}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["tags"] == ["handbook", "2026"] and response.json()["max_pages"] == 5
    assert [d.metadata["tags"] for d in Document.objects.filter(collection=folder.collection)] == [
        ["handbook", "2026"]] * 2
    fixed = client_of(user).patch(f"/api/sources/{folder.pk}/", {"path": "/etc"}, format="json")
    assert fixed.status_code == 400 and "cannot be changed" in fixed.json()["path"][0]


def test_delete_removes_the_source_and_its_documents(client_of, folder, user):
    from sources.sync import source_sync

    source_sync(source_id=folder.pk)
    assert Document.objects.filter(collection=folder.collection).count() == 2
    assert client_of(user).delete(f"/api/sources/{folder.pk}/").status_code == 204
    assert not Source.objects.filter(pk=folder.pk).exists()
    assert not Document.objects.filter(collection=folder.collection).exists()


@pytest.mark.parametrize(("body", "field", "words"), [
    ({"kind": "ftp", "url": "https://example.org/"}, "kind", "kind must be one of url, site, folder"),
    ({"kind": "url", "url": "not a url"}, "url", "not an http:// or https:// URL"),
    ({"kind": "url", "url": "file:///etc/passwd"}, "url", "not an http:// or https:// URL"),
    ({"kind": "site", "url": "http://example.org:99999/"}, "url", "not a valid URL"),
    ({"kind": "url"}, "url", "Give the page's or the site's URL"),
    ({"kind": "url", "url": "http://127.0.0.1:5432/"}, "url", "127.0.0.1 is a loopback address"),
    ({"kind": "url", "url": "http://169.254.169.254/latest/meta-data/"}, "url", "a link-local address"),
    ({"kind": "site", "url": "http://2130706433/"}, "url", "public addresses only (SOURCES_ALLOW_PRIVATE)"),
    ({"kind": "site", "url": "http://[::ffff:10.0.0.1]/"}, "url", "public addresses only"),
    ({"kind": "site", "url": "https://example.org/", "max_pages": MAX_PAGES_LIMIT + 1}, "max_pages", "from 1 to"),
    ({"kind": "site", "url": "https://example.org/", "max_pages": 10**30}, "max_pages", "from 1 to"),
    ({"kind": "site", "url": "https://example.org/", "max_depth": -1}, "max_depth", "from 0 to"),
    ({"kind": "site", "url": "https://example.org/", "schedule": "yearly"}, "schedule", "one of none, hourly"),
    ({"kind": "site", "url": "https://example.org/", "tags": "x"}, "tags", "list of strings"),
    ({"kind": "folder", "path": "/etc"}, "path", "not inside a folder the operator allows"),
    ({"kind": "folder", "path": "handbook/../.."}, "path", "not inside a folder the operator allows"),
    ({"kind": "folder", "path": "escape"}, "path", "not inside a folder the operator allows"),
    ({"kind": "folder", "path": "nowhere"}, "path", "no such folder"),
    # Review round 3: these were accepted (a stored password) or a 500.
    ({"kind": "url", "url": "https://user:secret@example.org/"}, "url", "user name or password is not accepted"),
    ({"kind": "site", "url": "https://@example.org/"}, "url", "user name or password is not accepted"),
    ({"kind": "url", "url": "javascript:alert(1)"}, "url", "not an http:// or https:// URL"),
    ({"kind": "url", "url": "gopher://example.org/"}, "url", "not an http:// or https:// URL"),
    ({"kind": "url", "url": "http://[::1]/"}, "url", "::1 is a loopback address"),
    ({"kind": "folder", "path": "x" * 5000}, "path", "cannot be read (File name too long)"),
])
def test_bad_input_is_a_400_naming_the_problem(client_of, body, field, words, allowed_root, team, user, tmp_path):
    (allowed_root / "escape").symlink_to(tmp_path)  # a link inside the allowed folder leading out of it
    response = client_of(user).post("/api/sources/", {"collection": "team", **body}, format="json")
    assert response.status_code == 400, response.json()
    assert words in " ".join(response.json()[field]), response.json()
    assert not Source.objects.exists()


def test_a_private_address_is_accepted_when_the_operator_allows_it(client_of, team, user, settings):
    settings.SOURCES_ALLOW_PRIVATE = True
    response = client_of(user).post("/api/sources/", {"collection": "team", "kind": "url",
                                                      "url": "http://127.0.0.1:8080/wiki/"}, format="json")
    assert response.status_code == 201, response.json()


def test_folder_sources_are_off_without_sources_folders(client_of, team, user, settings):
    settings.SOURCES_FOLDERS = []
    response = client_of(user).post("/api/sources/", {"collection": "team", "kind": "folder", "path": "/tmp"},
                                    format="json")
    assert response.status_code == 400
    assert "SOURCES_FOLDERS" in response.json()["path"][0]


def test_unknown_fields_are_refused(client_of, team, user):
    response = client_of(user).post("/api/sources/", {"collection": "team", "kind": "url",
                                                      "url": "https://example.org/", "depth": 3}, format="json")
    assert response.status_code == 400 and "depth" in str(response.json())


def test_source_changes_are_in_the_audit_trail(client_of, folder, user, carol, eager_media,
                                               django_capture_on_commit_callbacks):
    from audit.models import Action, AuditEvent

    added = AuditEvent.objects.get(action=Action.SOURCE_ADDED)
    assert (added.actor_username, added.target_id) == ("alice", str(folder.pk))
    assert client_of(carol).patch(f"/api/sources/{folder.pk}/", {"schedule": "daily"}, format="json").status_code == 200
    changed = AuditEvent.objects.get(action=Action.SOURCE_CHANGED)
    assert (changed.actor_username, changed.detail) == ("carol", {"schedule": {"from": "none", "to": "daily"}})
    with django_capture_on_commit_callbacks(execute=True):
        assert client_of(user).post(f"/api/sources/{folder.pk}/sync/").status_code == 202
    synced = AuditEvent.objects.get(action=Action.SOURCE_SYNCED)
    assert synced.detail["new"] == 2 and synced.actor_username == ""
    assert client_of(carol).delete(f"/api/sources/{folder.pk}/").status_code == 204
    deleted = AuditEvent.objects.get(action=Action.SOURCE_DELETED)
    assert deleted.actor_username == "carol" and deleted.detail["location"].endswith("handbook")


def test_sync_now_answers_at_once_without_waiting_for_the_sync(client_of, folder, user, settings):
    """No web thread waits for a sync: the answer is 202 with the URL to poll before any worker ran it."""
    response = client_of(user).post(f"/api/sources/{folder.pk}/sync/")  # on_commit never runs: no worker here
    assert response.status_code == 202
    assert response.json() == {"state": "queued", "url": f"/api/sources/{folder.pk}/",
                               "detail": response.json()["detail"]}
    assert Source.objects.get(pk=folder.pk).state == Source.State.QUEUED


def test_sync_now_is_rate_limited_per_user(client_of, folder, user, carol):
    from django.core.cache import caches

    from sources.quotas import SyncNowQuota

    caches["quotas"].clear()
    allowed = int(SyncNowQuota.rate.split("/")[0])
    client = client_of(user)
    answers = [client.post(f"/api/sources/{folder.pk}/sync/").status_code for _ in range(allowed + 1)]
    assert answers == [202] * allowed + [429]
    refused = client.post(f"/api/sources/{folder.pk}/sync/")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert client_of(carol).post(f"/api/sources/{folder.pk}/sync/").status_code == 202  # another user's budget
    caches["quotas"].clear()


def test_a_user_adds_at_most_max_sources_per_user(client_of, team, user, monkeypatch):
    from sources import quotas

    monkeypatch.setattr(quotas, "MAX_SOURCES_PER_USER", 2)
    client = client_of(user)
    for n in range(2):
        created = client.post("/api/sources/", {"collection": "team", "kind": "url",
                                                "url": f"https://example.org/{n}", "schedule": "none"}, format="json")
        assert created.status_code == 201, created.json()
    refused = client.post("/api/sources/", {"collection": "team", "kind": "url", "url": "https://example.org/2"},
                          format="json")
    assert refused.status_code == 400 and "the most one person may keep" in refused.json()["detail"]
    assert Source.objects.filter(created_by=user).count() == 2
