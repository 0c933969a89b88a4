"""Helpers of the sources tests."""

from __future__ import annotations

import os


def write(path, text: str, *, mtime: float | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def allow_folders(user) -> None:
    """Give `user` the permission to add server folder sources (sources.folders.may_add_folder)."""
    from django.contrib.auth.models import Permission

    user.user_permissions.add(Permission.objects.get(content_type__app_label="sources",
                                                     codename="add_folder_source"))
