"""`manage.py ingest PATH... [--collection SLUG] [--wait] [--quiet]`: queue files and folders for ingestion.

Every file goes through the same upload rule as the web page, the admin and the API
(corpus.uploads.upload_error, via services.document_upload) and a refused one is reported with the
same message. Files of another type met while walking a folder are skipped (reported unless
--quiet); any other refusal (an empty or too large file, a named file of another type) is an error:
the other files are still ingested, then the command exits non-zero.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError

from corpus import services, uploads
from corpus.management.waiting import wait_for_documents
from corpus.models import Document

Status = Document.Status


def iter_files(path: Path) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]]]:
    """(file, source) pairs under `path`, and (path, why) for what was skipped.

    A folder is walked recursively, skipping hidden files and folders; source is the path
    relative to the folder (POSIX separators). Symbolic links inside the folder, to files or to
    folders, are never followed, wherever they point: one could make a secret outside the folder
    (say var/secret_key) a document others may read. A path named on the command line is taken
    as given, link or not (the operator chose it). A single file's source is its name.
    """
    if path.is_file():
        return [(path, path.name)], []
    found: list[tuple[Path, str]] = []
    skipped: list[tuple[Path, str]] = []
    for directory, folders, names in os.walk(path):  # followlinks=False: linked folders are not entered
        base = Path(directory)
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in [*folders, *names]:
            entry = base / name
            if not name.startswith(".") and entry.is_symlink():
                skipped.append((entry, f"{entry}: a symbolic link, not followed"))
        for name in sorted(names):
            file = base / name
            if name.startswith(".") or file.is_symlink() or not file.is_file():
                continue
            if file.suffix.lower() in uploads.SUPPORTED_EXTENSIONS:
                found.append((file, file.relative_to(path).as_posix()))
            else:
                skipped.append((file, uploads.upload_error(str(file), file.stat().st_size)))
    found.sort(key=lambda pair: pair[1])
    return found, sorted(skipped)


def _open_no_follow(file: Path):
    """Open a file found in a folder for reading, refusing it if it was swapped for a link since."""
    return os.fdopen(os.open(file, os.O_RDONLY | os.O_NOFOLLOW), "rb")


class Command(BaseCommand):
    help = ("Ingest files or folders (recursively) into a collection. Source = the path relative to the "
            "folder given. With --wait, show progress and exit non-zero if any document failed.")

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--collection", default="default", help="Collection slug (created if missing).")
        parser.add_argument("--public", action="store_true",
                            help="Make the collection readable by every signed-in user.")
        parser.add_argument("--wait", action="store_true", help="Wait for processing, with a progress bar.")
        parser.add_argument("--timeout", type=float, default=None, help="Give up waiting after this many seconds.")
        parser.add_argument("--quiet", action="store_true", help="Print only errors and the summary.")

    def handle(self, *args, quiet: bool, **options):
        if not quiet:
            return self._ingest(quiet=quiet, **options)
        # Processed in this process (CELERY_TASK_ALWAYS_EAGER, as `make eval` does), every document
        # would log its progress; errors and warnings still show.
        logging.disable(logging.INFO)
        try:
            return self._ingest(quiet=quiet, **options)
        finally:
            logging.disable(logging.NOTSET)

    def _ingest(self, *, paths: list[Path], collection: str, public: bool, wait: bool, timeout: float | None,
                quiet: bool, **options):
        files: list[tuple[Path, str]] = []
        named = {path for path in paths if path.is_file()}  # followed even if links: the operator named them
        for path in paths:
            if not path.exists():
                raise CommandError(f"{path} does not exist.")
            found, skipped = iter_files(path)
            files.extend(found)
            if not quiet:
                for _, why in skipped:
                    self.stdout.write(f"skipped {why}")
        if not files:
            raise CommandError("No supported files found "
                               f"(supported: {', '.join(sorted(uploads.SUPPORTED_EXTENSIONS))}).")
        try:
            target = services.collection_get_or_create(slug=collection)
        except ValidationError as exc:
            raise CommandError(f"Invalid collection slug {collection!r}: {'; '.join(exc.messages)}") from None
        if public and not target.is_public:
            target.is_public = True
            target.save(update_fields=["is_public"])

        ids: list[int] = []
        unchanged = refused = 0
        for file, source in files:
            before = Document.objects.filter(collection=target, source=source).values_list(
                "built_hash", "status").first()
            try:
                handle = file.open("rb") if file in named else _open_no_follow(file)
            except OSError as exc:  # ELOOP: it became a link since the folder was listed
                refused += 1
                self.stderr.write(f"refused {file}: {exc.strerror or exc}")
                continue
            with handle:
                result = services.document_upload(collection=target, file=File(handle, name=file.name),
                                                  source=source)
            if not result.accepted:
                refused += 1
                self.stderr.write(f"refused {result.error}")
                continue
            document = result.document
            ids.append(document.pk)
            if before and before == (document.content_hash, Status.READY) and document.status == Status.READY:
                unchanged += 1
            elif not quiet:
                self.stdout.write(f"queued {document.source}")
        self.stdout.write(f"{len(ids)} document(s) in collection {target.slug!r}: "
                          f"{len(ids) - unchanged} queued, {unchanged} unchanged"
                          + (f"; {refused} file(s) refused." if refused else "."))
        if wait and ids:
            wait_for_documents(self, ids, timeout=timeout, quiet=quiet)
        if refused:
            raise CommandError(f"{refused} file(s) refused (see above).")
