"""What every fault run must end with, read from the app's database through Django's ORM: every
document ready exactly once (or failed with a message), and no orphan, gap or duplicate chunk."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Outcome:
    documents: int = 0
    ready: int = 0
    failed: int = 0
    unfinished: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    failed_without_message: list[str] = field(default_factory=list)
    bad_chunks: list[str] = field(default_factory=list)  # gaps, overlaps, duplicates, orphans
    chunks: int = 0

    @property
    def ok(self) -> bool:
        return not (self.unfinished or self.missing or self.duplicated or self.failed_without_message
                    or self.bad_chunks)

    def problems(self) -> str:
        parts = []
        for name in ("unfinished", "missing", "duplicated", "failed_without_message", "bad_chunks"):
            values = getattr(self, name)
            if values:
                parts.append(f"{name}: {', '.join(values[:5])}{' ...' if len(values) > 5 else ''}")
        return "; ".join(parts)


def reconnect() -> None:
    from django.db import connections

    for connection in connections.all():
        connection.close()


def wait_finished(slug: str, *, count: int, timeout: float) -> bool:
    """Wait until `count` documents of the collection are ready or failed (False on timeout)."""
    from corpus.models import Document

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            finished = Document.objects.filter(collection__slug=slug, status__in=("ready", "failed")).count()
            if finished >= count:
                return True
        except Exception:  # the database may be restarting under us
            reconnect()
        time.sleep(1)
    return False


def check_collection(slug: str, expected_sources: list[str]) -> Outcome:
    """The invariants, for the documents of collection `slug`."""
    from django.db import connection
    from django.db.models import Count

    from corpus.models import Chunk, Document

    reconnect()
    outcome = Outcome()
    documents = list(Document.objects.filter(collection__slug=slug).values(
        "id", "source", "status", "error", "text", "progress_total", "built_hash", "content_hash"))
    outcome.documents = len(documents)
    by_source: dict[str, int] = {}
    for document in documents:
        by_source[document["source"]] = by_source.get(document["source"], 0) + 1
    outcome.duplicated = [s for s, n in by_source.items() if n > 1]
    outcome.missing = [s for s in expected_sources if s not in by_source]
    for document in documents:
        source = document["source"]
        if document["status"] == "failed":
            outcome.failed += 1
            if not document["error"].strip():
                outcome.failed_without_message.append(source)
            continue
        if document["status"] != "ready":
            outcome.unfinished.append(f"{source} ({document['status']})")
            continue
        outcome.ready += 1
        chunks = list(Chunk.objects.filter(document_id=document["id"]).order_by("chunk_index")
                      .values_list("chunk_index", "start", "end", "text"))
        outcome.chunks += len(chunks)
        text = document["text"]
        problems = []
        if [c[0] for c in chunks] != list(range(len(chunks))):
            problems.append("chunk indexes are not 0..n-1")
        if len(chunks) != document["progress_total"]:
            problems.append(f"{len(chunks)} chunks, progress says {document['progress_total']}")
        position = 0
        for index, start, end, chunk_text in chunks:
            if start != position or chunk_text != text[start:end]:
                problems.append(f"chunk {index} does not continue the text at {position}")
                break
            position = end
        if position != len(text):
            problems.append("the chunks do not reach the end of the text")
        if document["built_hash"] != document["content_hash"]:
            problems.append("built from other content")
        if problems:
            outcome.bad_chunks.append(f"{source}: {problems[0]}")
    # Chunks pointing at no document cannot exist (a foreign key), but chunk rows duplicated for
    # one place of a document can: say so if any appear.
    duplicates = (Chunk.objects.filter(document__collection__slug=slug).values("document_id", "start")
                  .annotate(n=Count("id")).filter(n__gt=1).count())
    if duplicates:
        outcome.bad_chunks.append(f"{duplicates} chunk positions stored twice")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM corpus_chunk c LEFT JOIN corpus_document d ON d.id = c.document_id "
                       "WHERE d.id IS NULL")
        orphans = cursor.fetchone()[0]
    if orphans:
        outcome.bad_chunks.append(f"{orphans} orphan chunks")
    return outcome
