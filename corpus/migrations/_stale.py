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
