"""What the "stale" data migrations share (Django's loader skips modules whose name starts with "_"):
marking documents out of date so that they are built again."""

READY = "ready"


def queue_rebuild(Document, pks, *, only_filed: bool = False) -> None:
    """Mark the documents `pks` out of date (their next ingest or sync rebuilds them) and queue those
    ready, so a worker rebuilds them in the background while their old chunks stay searchable; with
    `only_filed`, only those with a stored file to rebuild from are queued."""
    if not pks:
        return
    marked = Document.objects.filter(pk__in=pks)
    marked.update(built_signature="")
    ready = marked.filter(status=READY)
    if only_filed:
        ready = ready.exclude(file="")
    ready.update(status="queued", progress_done=0, progress_total=0)


def files_matching(documents, test) -> set:
    """The pks of `documents` (a queryset) whose stored file passes `test(document, handle)`, the file
    open for reading in binary; a document without a file, or whose file is gone or damaged, is left
    out (nothing to rebuild from)."""
    import zipfile

    matching = set()
    for document in documents.exclude(file="").iterator():
        try:
            with document.file.open("rb") as handle:
                if test(document, handle):
                    matching.add(document.pk)
        except (OSError, KeyError, zipfile.BadZipFile):
            continue
    return matching
