"""Back-pressure on publishing (corpus.graph.merge.graph_make_room): a tail over the bound is merged down by
the publisher itself before it publishes, oldest first; nothing is lost, and it never waits on another merger."""

import logging

import pytest
from django.db import connection, connections

from corpus import services, tasks
from corpus.graph import merge
from corpus.ingest import pipeline
from corpus.models import Chunk, Collection, Document
from tests.chat.factories import make_collection, make_document, random_unit_vectors
from tests.corpus.ingest_helpers import GUIDE_V1, assert_chunks_tile, eager_media  # noqa: F401

pytestmark = pytest.mark.usefixtures("eager_media")


def _tail_document(collection, source: str, n: int, seed: int = 0) -> Document:
    """A published document of `n` chunks, all outside the graph (no merge queued)."""
    return make_document(collection, source, [f"{source} word{i} " for i in range(n)],
                         embeddings=random_unit_vectors(n, seed=seed))


def _in_graph(document: Document) -> list[bool]:
    return list(Chunk.objects.filter(document=document).order_by("chunk_index").values_list("in_graph", flat=True))


@pytest.mark.django_db
def test_under_the_limit_nothing_is_merged():
    old = _tail_document(make_collection("pace"), "old.txt", 10)
    room = merge.graph_make_room(chunks=5, limit=15)
    assert (room.merged, room.tail) == (0, 10)
    assert _in_graph(old) == [False] * 10


@pytest.mark.django_db
def test_over_the_limit_the_oldest_chunks_are_merged_until_the_new_ones_fit():
    col = make_collection("pace")
    oldest = _tail_document(col, "oldest.txt", 12, seed=1)
    newer = _tail_document(col, "newer.txt", 12, seed=2)
    room = merge.graph_make_room(chunks=6, limit=16, batch=4)
    # 24 + 6 > 16: batches of 4 until 12 + 6 > 16 no more, i.e. 12 merged and 8 left... then 8 + 6 <= 16.
    assert (room.merged, room.tail) == (16, 8)
    assert _in_graph(oldest) == [True] * 12
    assert sum(_in_graph(newer)) == 4
    with connection.cursor() as cursor:  # the merged chunks got their postings, as the background merge gives them
        cursor.execute("SELECT count(DISTINCT chunk_id) FROM bm25_posting")
        assert cursor.fetchone()[0] == 16


@pytest.mark.django_db
def test_a_document_bigger_than_the_limit_waits_for_an_empty_tail_then_goes_in_alone():
    old = _tail_document(make_collection("pace"), "old.txt", 7)
    room = merge.graph_make_room(chunks=50, limit=20, batch=5)
    assert (room.merged, room.tail) == (7, 0)
    assert _in_graph(old) == [True] * 7
    assert merge.graph_make_room(chunks=50, limit=20).merged == 0  # nothing to wait for


@pytest.mark.django_db(transaction=True)  # another connection holds the tail's rows
def test_it_does_not_wait_for_chunks_another_merger_is_merging():
    old = _tail_document(make_collection("pace"), "old.txt", 6)
    other = connections.create_connection("default")
    try:
        other.set_autocommit(False)
        with other.cursor() as cursor:  # what a merger's batch holds until it commits
            cursor.execute("SELECT id FROM corpus_chunk WHERE NOT in_graph FOR UPDATE")
        room = merge.graph_make_room(chunks=5, limit=4)
        assert (room.merged, room.tail) == (0, 6)
        other.rollback()
    finally:
        other.close()
    assert merge.graph_make_room(chunks=5, limit=4).merged == 6
    assert _in_graph(old) == [True] * 6


@pytest.mark.django_db
def test_ingestion_merges_the_tail_down_before_it_publishes(monkeypatch, caplog, django_capture_on_commit_callbacks):
    monkeypatch.setattr(tasks.graph_merge_task, "apply_async", lambda *a, **kw: None)  # no background merger
    monkeypatch.setattr(merge, "TAIL_LIMIT", 30)
    col = Collection.objects.create(slug="notes", name="Notes", chunk_size=32, chunk_overlap=0)
    old = _tail_document(col, "old.txt", 40)
    with caplog.at_level(logging.INFO, logger=pipeline.__name__), django_capture_on_commit_callbacks(execute=True):
        document = services.document_ingest(collection=col, source="guide.md", data=GUIDE_V1, filename="guide.md")
    document.refresh_from_db()
    assert document.status == Document.Status.READY
    new = assert_chunks_tile(document)  # published whole, outside the graph (the merge is left to the background)
    assert 3 <= len(new) <= 30 and not any(c.in_graph for c in new)
    assert _in_graph(old) == [True] * 40  # one batch (up to merge.BATCH) took the whole old tail
    assert merge.graph_tail_size() == len(new)
    assert f"document {document.pk} waited" in caplog.text and "merged 40 chunks itself" in caplog.text
