"""Fixtures of the sources tests: an allowed server folder, a collection, eager processing."""

from __future__ import annotations

import pytest

from corpus.models import Collection
from tests.corpus.ingest_helpers import eager_media  # noqa: F401  (a fixture)
from tests.sources.helpers import allow_folders


@pytest.fixture
def allowed_root(tmp_path, settings, user):
    """A folder listed in SOURCES_FOLDERS, with a sub-folder `handbook`; `user` may add folder sources
    (tests/sources/test_folder_safety.py tests who may by default)."""
    root = tmp_path / "shared"
    (root / "handbook").mkdir(parents=True)
    settings.SOURCES_FOLDERS = [str(root)]
    allow_folders(user)
    return root


@pytest.fixture
def collection(user):
    return Collection.objects.create(slug="team", name="Team", owner=user)
