"""A source's tags join its documents' own tags: tags set on a document by hand survive a sync of
its changed content and a change of the source's tags."""

from __future__ import annotations

import pytest

from corpus import services as corpus_services
from corpus.models import Document
from sources import services
from sources.sync import source_sync
from tests.sources.helpers import write

pytestmark = pytest.mark.django_db


def test_hand_set_tags_survive_syncs_and_source_tag_changes(allowed_root, collection, user, eager_media,
                                                            django_capture_on_commit_callbacks):
    page = allowed_root / "handbook" / "intro.md"
    write(page, "# Intro\n\nThe lighthouse keeper logs the weather.\n", mtime=1_000_000)
    with django_capture_on_commit_callbacks(execute=True):
        source = services.source_create(collection=collection, kind="folder", path="handbook", schedule="none",
                                        tags=["handbook"], created_by=user, sync=False)
        source_sync(source_id=source.pk)
    document = Document.objects.get()
    assert document.metadata["tags"] == ["handbook"]
    corpus_services.document_set_tags(document=document, tags=["handbook", "reviewed", "2026"])

    write(page, "# Intro\n\nThe keeper logs the weather every hour.\n", mtime=2_000_000)
    with django_capture_on_commit_callbacks(execute=True):
        assert source_sync(source_id=source.pk).changed == 1
    assert Document.objects.get().metadata["tags"] == ["handbook", "reviewed", "2026"]

    services.source_update(source=source, tags=["manual", "2026"])
    # The source's old tag goes, its new ones come; "reviewed" was set by hand and stays.
    assert Document.objects.get().metadata["tags"] == ["reviewed", "2026", "manual"]
