"""`manage.py ingest`: folders, relative sources, skipped files, --wait and its exit status."""

from __future__ import annotations

import logging
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from corpus import uploads
from corpus.models import Collection, Document
from tests.corpus.ingest_helpers import GUIDE_V1, GUIDE_V2, eager_media  # noqa: F401
from tests.workers import ROOT, worker_env

Status = Document.Status


@pytest.fixture
def folder(tmp_path) -> Path:
    root = tmp_path / "docs"
    (root / "guides" / "deep").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "guides" / "garden.md").write_bytes(GUIDE_V1)
    (root / "guides" / "deep" / "peppers.md").write_bytes(GUIDE_V2)
    (root / "readme.txt").write_text("A plain text file about compost heaps and worms.\n")
    (root / ".hidden.md").write_text("# Hidden\n\nnot for ingestion\n")
    (root / ".git" / "config.txt").write_text("not for ingestion either\n")
    (root / "sketch.psd").write_bytes(b"8BPS\x00\x01")  # Photoshop: not a type ragweb reads
    return root


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("ingest", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_ingests_a_folder_with_relative_sources_and_waits(folder):
    out, err = run(str(folder), "--collection", "garden", "--wait")

    collection = Collection.objects.get(slug="garden")
    documents = Document.objects.filter(collection=collection)
    assert sorted(documents.values_list("source", flat=True)) == [
        "guides/deep/peppers.md", "guides/garden.md", "readme.txt"]
    assert set(documents.values_list("status", flat=True)) == {Status.READY}
    picture = folder / "sketch.psd"
    assert f"skipped {uploads.upload_error(str(picture), picture.stat().st_size)}" in out
    assert f"skipped {picture}: this file type is not supported" in out
    assert ".hidden" not in out and "config.txt" not in out
    assert "All 3 document(s) ready" in out

    again, _ = run(str(folder), "--collection", "garden", "--quiet")
    assert "3 queued" not in again and "0 queued, 3 unchanged" in again


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_quiet_silences_the_progress_logged_while_documents_are_processed_in_process(folder, caplog):
    caplog.set_level(logging.INFO)
    run(str(folder / "readme.txt"), "--collection", "loud")
    assert any("ready: 1 chunks" in r.getMessage() for r in caplog.records)
    caplog.clear()

    run(str(folder / "guides"), "--collection", "quiet", "--wait", "--quiet")
    assert Document.objects.filter(collection__slug="quiet", status=Status.READY).count() == 2
    assert [r.getMessage() for r in caplog.records if r.levelno <= logging.INFO] == []
    logging.getLogger("corpus").info("after the command")  # logging is back to normal
    assert [r.getMessage() for r in caplog.records] == ["after the command"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_a_single_file_keeps_its_name_as_source_in_the_default_collection(folder):
    run(str(folder / "guides" / "garden.md"), "--quiet")

    document = Document.objects.get()
    assert document.collection.slug == "default" and document.source == "garden.md"
    assert document.status == Status.READY


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_wait_fails_and_lists_the_failed_documents(folder):
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n not really a PDF \x00\x01")

    with pytest.raises(CommandError, match=r"1 of 4 document\(s\) failed"):
        out, err = StringIO(), StringIO()
        try:
            call_command("ingest", str(folder), "--collection", "garden", "--wait", "--quiet", stdout=out,
                         stderr=err)
        finally:
            assert "FAILED broken.pdf: " in err.getvalue()
    assert Document.objects.filter(status=Status.READY).count() == 3


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_refused_files_get_the_upload_rules_message_and_the_others_are_ingested(folder, settings):
    settings.MAX_UPLOAD_BYTES = 1000
    (folder / "empty.md").write_bytes(b"")
    (folder / "huge.txt").write_bytes(b"x" * 1001)
    (folder / "notes.xyz").write_bytes(b"some notes")

    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError, match=r"3 file\(s\) refused"):
        call_command("ingest", str(folder), str(folder / "notes.xyz"), "--collection", "garden", "--wait",
                     stdout=out, stderr=err)

    refused = [line for line in err.getvalue().splitlines() if line.startswith("refused ")]
    assert refused == ["refused " + uploads.upload_error("empty.md", 0),
                       "refused " + uploads.upload_error("huge.txt", 1001),
                       "refused " + uploads.upload_error("notes.xyz", 10)]
    # named on the command line, a file of another type is refused; met in a folder, skipped
    assert f"skipped {folder / 'notes.xyz'}: this file type is not supported" in out.getvalue()
    assert sorted(Document.objects.values_list("source", "status")) == [
        ("guides/deep/peppers.md", "ready"), ("guides/garden.md", "ready"), ("readme.txt", "ready")]


@pytest.mark.django_db
def test_missing_path_and_bad_slug_are_errors(folder, tmp_path):
    with pytest.raises(CommandError, match="does not exist"):
        run(str(tmp_path / "nope"))
    with pytest.raises(CommandError, match="Invalid collection slug"):
        run(str(folder), "--collection", "no spaces please")
    assert not Document.objects.exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_media")
def test_public_flag_makes_the_collection_readable_by_everyone(folder, user):
    from corpus.permissions import readable_collections

    run(str(folder / "readme.txt"), "--collection", "demo", "--public", "--quiet")

    assert list(readable_collections(user).values_list("slug", flat=True)) == ["demo"]


@pytest.mark.django_db(transaction=True)
def test_the_command_exits_non_zero_when_a_file_is_refused_or_fails(settings, tmp_path):
    """The real `manage.py ingest --wait` process, eager (no worker): an empty file is refused with
    the upload rule's message, a file that cannot be parsed fails; both give a non-zero exit."""
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7\n not really a PDF \x00\x01")
    env = worker_env(settings) | {"CELERY_TASK_ALWAYS_EAGER": "1"}

    def ingest(name):
        return subprocess.run([sys.executable, "manage.py", "ingest", str(tmp_path / name), "--wait", "--quiet"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)

    refused, failed = ingest("empty.txt"), ingest("broken.pdf")

    assert refused.returncode == 1, refused.stderr
    assert "refused empty.txt: the file is empty." in refused.stderr
    assert failed.returncode == 1, failed.stderr
    assert "FAILED broken.pdf: " in failed.stderr
    assert list(Document.objects.values_list("source", "status")) == [("broken.pdf", Status.FAILED)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_symbolic_links_inside_a_folder_are_never_followed(folder, tmp_path):
    secret = tmp_path / "secret_key"
    secret.write_text("django-insecure-the-secret-key\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.md").write_text("# Private\n\nNot in the folder.\n")
    (folder / "notes.txt").symlink_to(secret)
    (folder / "passwd.txt").symlink_to("/etc/passwd")
    (folder / "guides" / "linked").symlink_to(outside, target_is_directory=True)
    (folder / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    (folder / "inside.md").symlink_to(folder / "guides" / "garden.md")  # inside, but a link all the same

    out, _ = run(str(folder), "--collection", "garden", "--wait")

    sources = sorted(Document.objects.values_list("source", flat=True))
    assert sources == ["guides/deep/peppers.md", "guides/garden.md", "readme.txt"]
    assert not Document.objects.filter(text__contains="secret").exists()
    assert not Document.objects.filter(text__contains="root:").exists()
    for link in ("notes.txt", "passwd.txt", "guides/linked", "dangling.md", "inside.md"):
        assert f"skipped {folder / link}: a symbolic link, not followed" in out


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_a_link_named_on_the_command_line_is_followed(folder, tmp_path):
    link = tmp_path / "chosen.md"
    link.symlink_to(folder / "guides" / "garden.md")

    run(str(link), "--collection", "garden", "--wait")

    assert Document.objects.get().source == "chosen.md"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_control_and_bidirectional_characters_are_dropped_from_sources(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "invoice\u202egpj.md").write_bytes(GUIDE_V1)  # shows as "invoicedm.jpg" with the override
    (root / "tab\there\x07.md").write_bytes(GUIDE_V2)

    out, _ = run(str(root), "--collection", "names", "--wait")

    assert sorted(Document.objects.values_list("source", flat=True)) == ["invoicegpj.md", "tab here.md"]
    assert "queued invoicegpj.md" in out and "\u202e" not in out
