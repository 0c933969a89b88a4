"""Waiting for documents to be processed, with a progress bar: `manage.py ingest --wait` and
`manage.py sync_sources --wait`."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Sum

from corpus.models import Document

Status = Document.Status
POLL_SECONDS = 0.5


def wait_for_documents(command: BaseCommand, ids: list[int], *, timeout: float | None, quiet: bool) -> None:
    """Show a progress bar on `command`'s stderr until every document of `ids` is ready or failed
    (documents deleted meanwhile count as done); print the failures and raise CommandError if any
    failed or `timeout` seconds passed."""
    from tqdm import tqdm

    documents = Document.objects.filter(pk__in=ids)
    deadline = None if timeout is None else time.monotonic() + timeout
    bar = tqdm(total=len(ids), unit="doc", desc="ingesting", disable=quiet, file=command.stderr._out)
    try:
        while True:
            finished = len(ids) - documents.exclude(status__in=(Status.READY, Status.FAILED)).count()
            chunks = documents.aggregate(done=Sum("progress_done"), total=Sum("progress_total"))
            bar.n = finished
            bar.set_postfix_str(f"chunks {chunks['done'] or 0}/{chunks['total'] or 0}", refresh=False)
            bar.refresh()
            if finished == len(ids):
                break
            if deadline is not None and time.monotonic() > deadline:
                raise CommandError(f"Timed out: {len(ids) - finished} document(s) still processing.")
            time.sleep(POLL_SECONDS)
    finally:
        bar.close()
    failed = list(documents.filter(status=Status.FAILED).order_by("source").values_list("source", "error"))
    total_chunks = documents.aggregate(n=Sum("progress_total"))["n"] or 0
    if failed:
        for source, error in failed:
            command.stderr.write(f"FAILED {source}: {error}")
        raise CommandError(f"{len(failed)} of {len(ids)} document(s) failed.")
    command.stdout.write(f"All {len(ids)} document(s) ready ({total_chunks} chunks).")
