"""Shared bits of the ingestion tests: sample documents and checks of the chunk invariants."""

from __future__ import annotations

import numpy as np
import pytest

from corpus import services
from corpus.models import Chunk, Document

GUIDE_V1 = b"""# Garden guide

Tomatoes need six hours of sun and regular watering. Stake them early so the stems do not bend.

## Soil

Loamy soil with plenty of compost keeps the roots healthy. Test the pH once a year; tomatoes like it
slightly acidic.

## Pests

Aphids gather under the leaves. A spray of soapy water removes most of them without harming bees.
"""

GUIDE_V2 = b"""# Garden guide

Peppers need warmth more than anything else. Plant them after the last frost.

## Watering

Water deeply twice a week rather than a little every day, so the roots grow down.
"""


def long_markdown(sections: int, paragraphs: int = 3) -> bytes:
    """A Markdown document with `sections` headed sections of varied prose."""
    parts = ["# Field notes\n"]
    for s in range(sections):
        parts.append(f"\n## Section {s}: observations of plot {s % 13}\n")
        for p in range(paragraphs):
            parts.append(
                f"\nOn day {s * paragraphs + p} the plot number {s % 13} showed {p + 2} new shoots. The soil was "
                f"{'dry' if (s + p) % 3 else 'damp'} and the weather {'sunny' if s % 2 else 'cloudy'}; "
                f"we noted {s * 7 % 11} beetles, {p * 5 % 9} ladybirds and watered {s % 4 + 1} times.\n")
    return "".join(parts).encode()


def assert_chunks_tile(document: Document) -> list[Chunk]:
    """The chunk invariant: ordered, contiguous, non-overlapping, concatenating to the text."""
    chunks = list(Chunk.objects.filter(document=document).order_by("chunk_index"))
    assert chunks, "no chunks"
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    assert chunks[0].start == 0 and chunks[-1].end == len(document.text)
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert before.end == after.start
    for chunk in chunks:
        assert chunk.text == document.text[chunk.start: chunk.end]
        assert chunk.token_count > 0
        assert abs(float(np.linalg.norm(np.asarray(chunk.embedding))) - 1.0) < 1e-3
    assert "".join(c.text for c in chunks) == document.text
    assert document.progress_done == document.progress_total == len(chunks)
    return chunks


@pytest.fixture
def eager_media(settings, tmp_path):
    """Tasks run in-process (on commit) and uploaded files go to a temporary media root."""
    from ragweb.celery import app

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    app.conf.task_always_eager = True
    yield settings.MEDIA_ROOT
    app.conf.task_always_eager = False


def enqueued_builds(callbacks) -> int:
    """How many captured on-commit callbacks enqueue a document's build (corpus.services._enqueue);
    a build that publishes adds its own callback after it (corpus.signals.send_on_commit)."""
    return sum(getattr(callback, "__qualname__", "").startswith("_enqueue.") for callback in callbacks)


def ingest(collection, source, data, capture) -> Document:
    """Ingest `data` as `source` with the on-commit build run at once (`capture` is
    django_capture_on_commit_callbacks); the document, READY or the test fails."""
    with capture(execute=True):
        document = services.document_ingest(collection=collection, source=source, data=data, filename=source)
    document.refresh_from_db()
    assert document.status == Document.Status.READY, document.error
    return document
