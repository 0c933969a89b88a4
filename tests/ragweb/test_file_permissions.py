"""Stored documents are private to the app's user: other local accounts cannot read var/media."""

from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage


def test_stored_files_and_their_folders_are_private(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    name = FileSystemStorage().save("documents/2026/secret.txt", ContentFile(b"private"))
    stored = tmp_path / "media" / name
    assert stored.read_bytes() == b"private"
    assert stored.stat().st_mode & 0o777 == 0o600
    assert stored.parent.stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "media" / "documents").stat().st_mode & 0o777 == 0o700
