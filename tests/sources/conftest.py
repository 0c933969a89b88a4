"""Fixtures of the sources tests: an allowed server folder, a collection, eager processing."""

from __future__ import annotations

import pytest

from corpus.models import Collection
from tests.corpus.ingest_helpers import eager_media  # noqa: F401  (a fixture)


@pytest.fixture
def allowed_root(tmp_path, settings):
    """A folder listed in SOURCES_FOLDERS, with a sub-folder `handbook`; every user may add folder
    sources (tests/sources/test_folder_safety.py tests the staff-only default)."""
    root = tmp_path / "shared"
    (root / "handbook").mkdir(parents=True)
    settings.SOURCES_FOLDERS = [str(root)]
    settings.SOURCES_FOLDERS_ANYONE = True
    return root


@pytest.fixture
def collection(user):
    return Collection.objects.create(slug="team", name="Team", owner=user)
