"""Folder sources read only files whose one name is inside the folder: a second hard link (its
other name may be a secret anywhere on the file system) or a file on another device is refused.
Refusals never show the server's allowed folders or where a link leads. (Who may add a folder source:
tests/test_permission_matrix.py, "folder sources".)"""

from __future__ import annotations

import os
from unittest import mock

import pytest

from corpus.models import Collection, Document
from sources import folders
from sources.models import Source
from sources.sync import source_sync
from tests.sources.helpers import write

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(user):
    return Collection.objects.create(slug="team", name="Team", owner=user)


def test_a_hard_link_to_a_file_outside_the_folder_is_refused(allowed_root, tmp_path, team, user, eager_media):
    secret = tmp_path / "private" / "secret.md"
    write(secret, "# Secret\n\nThe root password is hunter2.\n")
    write(allowed_root / "handbook" / "fine.md", "# Fine\n\nNothing to hide.\n")
    os.link(secret, allowed_root / "handbook" / "innocent.md")
    source = Source.objects.create(collection=team, kind="folder", path=str((allowed_root / "handbook").resolve()),
                                   schedule="none", created_by=user)
    result = source_sync(source_id=source.pk)
    assert (result.new, result.failed) == (1, 1)
    assert result.failures == [{"item": "innocent.md", "reason": "the file has more than one hard link (another "
                                                                 "name of it may lie outside the folder)"}]
    assert list(Document.objects.values_list("source", flat=True)) == ["handbook/fine.md"]
    assert not Document.objects.filter(text__contains="hunter2").exists()


def test_a_file_on_another_device_is_refused(allowed_root, tmp_path):
    path = allowed_root / "handbook" / "mounted.md"
    write(path, "# Elsewhere\n")
    folder = (allowed_root / "handbook").resolve()
    listed = folders.FolderFile(path, "mounted.md", 0, 0)
    real_stat = os.stat

    def other_device(target, *args, **kwargs):
        info = real_stat(target, *args, **kwargs)
        return os.stat_result((*info[:2], info.st_dev + 1, *info[3:])) if str(target) == str(folder) else info

    with mock.patch.object(folders.os, "stat", other_device), pytest.raises(OSError, match="another device"):
        folders.read_file(listed, folder=folder)


def test_refusals_do_not_show_the_allowed_folders_or_where_a_link_leads(client_of, allowed_root, tmp_path, team, user):
    response = client_of(user).post("/api/sources/", {"collection": "team", "kind": "folder", "path": "/etc"},
                                    format="json")
    assert response.status_code == 400
    assert response.json()["path"] == ["/etc: not inside a folder the operator allows (SOURCES_FOLDERS)."]
    assert str(allowed_root) not in response.content.decode()
    elsewhere = allowed_root / "elsewhere"
    elsewhere.mkdir()
    (allowed_root / "moving").symlink_to(allowed_root / "handbook")
    source = Source.objects.create(collection=team, kind="folder", path=str(allowed_root / "moving"),
                                   schedule="none", created_by=user)
    result = source_sync(source_id=source.pk)
    assert result.error == (f"{allowed_root / 'moving'}: a link on its way now leads elsewhere; add the folder it "
                            "leads to as a source instead.")
    assert str(allowed_root / "handbook") not in result.error
