"""manage.py add_source and sync_sources: a folder added, synced with progress, a file deleted and
synced again; bad input is a CommandError with the message."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from corpus.models import Document
from sources.models import Source
from tests.sources.helpers import write


def run(*args) -> str:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue() + err.getvalue()


@pytest.mark.django_db(transaction=True)
def test_add_then_sync_with_wait_shows_progress_and_removes_deleted_files(allowed_root, eager_media):
    handbook = allowed_root / "handbook"
    write(handbook / "a.md", "# A\n\nThe anchor is painted red.\n")
    write(handbook / "b.md", "# B\n\nThe boat is painted blue.\n")
    added = run("add_source", "harbour", str(handbook), "--schedule", "none", "--tag", "hb", "--no-sync")
    source = Source.objects.get()
    assert f"Added source {source.pk} to 'harbour'" in added
    assert (source.kind, source.collection.slug, source.tags) == ("folder", "harbour", ["hb"])

    output = run("sync_sources", "--wait")
    assert "  new       a.md" in output and "  new       b.md" in output
    assert "2 new, 0 changed, 0 unchanged, 0 removed, 0 failed" in output
    assert "All 2 document(s) ready" in output
    assert Document.objects.filter(status=Document.Status.READY).count() == 2

    (handbook / "b.md").unlink()
    output = run("sync_sources", str(source.pk), "--wait")
    assert "  removed   b.md" in output and "0 new, 0 changed, 1 unchanged, 1 removed, 0 failed" in output
    assert list(Document.objects.values_list("source", flat=True)) == ["handbook/a.md"]


@pytest.mark.django_db
def test_add_source_refuses_a_folder_outside_sources_folders(allowed_root, tmp_path):
    with pytest.raises(CommandError, match="not inside a folder the operator allows"):
        run("add_source", "harbour", str(tmp_path))
    with pytest.raises(CommandError, match="max_pages must be a whole number from 1 to"):
        run("add_source", "harbour", "https://example.org/", "--kind", "site", "--max-pages", "0")
    assert not Source.objects.exists()


@pytest.mark.django_db
def test_sync_sources_names_unknown_ids():
    with pytest.raises(CommandError, match="No source with id 999"):
        run("sync_sources", "999")
