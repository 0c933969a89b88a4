"""Fixtures of the sources tests: an allowed server folder, a collection, eager processing."""

from __future__ import annotations

import os

import pytest

from corpus.models import Collection


@pytest.fixture
def allowed_root(tmp_path, settings):
    """A folder listed in SOURCES_FOLDERS, with a sub-folder `handbook`."""
    root = tmp_path / "shared"
    (root / "handbook").mkdir(parents=True)
    settings.SOURCES_FOLDERS = [str(root)]
    return root


@pytest.fixture
def collection(user):
    return Collection.objects.create(slug="team", name="Team", owner=user)


def write(path, text: str, *, mtime: float | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
