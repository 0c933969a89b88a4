"""corpus.ingest.batches: embedding batches shared by the documents one worker builds at once."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from django.db import connection

from corpus import services
from corpus.ingest import batches, pipeline
from corpus.ingest import embed as embedding
from corpus.models import Chunk, Collection, Document
from tests.corpus.ingest_helpers import GUIDE_V1, assert_chunks_tile, eager_media, long_markdown  # noqa: F401

SMALL = ["Tomatoes need six hours of sun.", "Stake them early so the stems do not bend."]
NEXT = [f"Section {i}: the plot showed {i + 2} new shoots after a week of rain and cool nights." * (1 + i % 3)
        for i in range(7)]


def _recording(monkeypatch, fail_on: str | None = None) -> list[list[str]]:
    """Record every batch encoded (the real model), failing any batch holding `fail_on`."""
    seen: list[list[str]] = []
    real = embedding.embed_texts

    def embed(texts, **kwargs):
        seen.append(list(texts))
        if fail_on is not None and fail_on in texts:
            raise ValueError("this input cannot be encoded")
        return real(texts, **kwargs)

    monkeypatch.setattr(embedding, "embed_texts", embed)
    return seen


@pytest.mark.slow
def test_documents_batched_together_get_the_vectors_each_gets_alone(settings, monkeypatch):
    settings.EMBEDDING_BATCH_SIZE = 4
    alone = [embedding.embed_texts(SMALL), embedding.embed_texts(NEXT)]
    seen = _recording(monkeypatch)
    encoder = batches.Encoder()

    small, following = encoder.submit(SMALL), encoder.submit(NEXT)
    vectors = [small.vectors(), following.vectors()]

    # The small document's two inputs share the first batch with the next document's first two.
    assert seen == [SMALL + NEXT[:2], NEXT[2:6], NEXT[6:]]
    for got, expected in zip(vectors, alone, strict=True):
        assert got.shape == expected.shape
        assert np.abs(got - expected).max() < 1e-5


def test_a_failing_document_in_a_shared_batch_fails_only_itself(settings, monkeypatch):
    settings.EMBEDDING_BATCH_SIZE = 8
    monkeypatch.setattr(embedding, "embed_texts", _fake_embed(fail_on="poison"))
    encoder = batches.Encoder()

    good = encoder.submit(["first", "second"])
    bad = encoder.submit(["third", "poison"])
    after = encoder.submit(["fourth"])

    assert np.allclose(good.vectors(), _fake_vectors(["first", "second"]))
    with pytest.raises(ValueError, match="cannot be encoded"):
        bad.vectors()
    assert np.allclose(after.vectors(), _fake_vectors(["fourth"]))


def test_progress_counts_each_batch_and_a_cancelled_job_is_not_encoded_further(settings, monkeypatch):
    settings.EMBEDDING_BATCH_SIZE = 2
    calls: list[list[str]] = []
    monkeypatch.setattr(embedding, "embed_texts", _fake_embed(calls=calls))
    encoder = batches.Encoder()

    job = encoder.submit([f"input {i}" for i in range(7)])
    assert list(job.progress()) == [2, 4, 6, 7]

    stopped = encoder.submit([f"other {i}" for i in range(6)])
    progress = stopped.progress()
    assert next(progress) == 2
    stopped.cancel()
    other = encoder.submit(["last"])
    assert np.allclose(other.vectors(), _fake_vectors(["last"]))
    assert [len(c) for c in calls] == [2, 2, 2, 1, 2, 1]  # the cancelled job's last 4 inputs: never


def test_one_thread_encodes_at_a_time_and_waiting_documents_share_its_batches(settings, monkeypatch):
    settings.EMBEDDING_BATCH_SIZE = 8
    running = threading.Event()
    release = threading.Event()
    active = []
    calls: list[list[str]] = []

    def embed(texts, **kwargs):
        active.append(1)
        assert len(active) == 1, "two batches at once"
        calls.append(list(texts))
        if len(calls) == 1:
            running.set()
            assert release.wait(10)
        active.pop()
        return _fake_vectors(texts)

    monkeypatch.setattr(embedding, "embed_texts", embed)
    encoder = batches.Encoder()
    results: dict[str, np.ndarray] = {}

    def document(name: str, texts: list[str]) -> None:
        results[name] = encoder.submit(texts).vectors()

    first = threading.Thread(target=document, args=("a", ["a0", "a1", "a2"]))
    first.start()
    assert running.wait(10)
    # While "a" is encoded, two more documents arrive; they wait and then share one batch.
    others = [threading.Thread(target=document, args=(name, [f"{name}{i}" for i in range(3)])) for name in "bc"]
    for thread in others:
        thread.start()
    while sum(len(j.texts) for j in encoder._jobs if j.waiting) < 6:
        threading.Event().wait(0.01)
    release.set()
    for thread in [first, *others]:
        thread.join(10)

    assert calls == [["a0", "a1", "a2"], ["b0", "b1", "b2", "c0", "c1", "c2"]] or \
        calls == [["a0", "a1", "a2"], ["c0", "c1", "c2", "b0", "b1", "b2"]]
    for name in "abc":
        assert np.allclose(results[name], _fake_vectors([f"{name}{i}" for i in range(3)]))


def _fake_vectors(texts: list[str]) -> np.ndarray:
    """A distinct vector per text, the same whatever batch it is in."""
    return np.array([[float(sum(map(ord, t))), float(len(t)), 1.0] for t in texts], dtype=np.float32)


def _fake_embed(*, fail_on: str | None = None, calls: list | None = None):
    def embed(texts, **kwargs):
        if calls is not None:
            calls.append(list(texts))
        if fail_on is not None and fail_on in texts:
            raise ValueError("this input cannot be encoded")
        return _fake_vectors(texts)
    return embed


def _build_side_by_side(monkeypatch, settings, files: dict[str, bytes], fail_on: str | None = None):
    """Run pipeline.process_document for `files` in threads of their own, as a worker's threads pool
    does, holding the encoder until every document waits on it, so their inputs meet in batches.
    Returns (outcomes by source, documents by source, every batch encoded)."""
    settings.EMBEDDING_BATCH_SIZE = 32
    monkeypatch.setattr(services, "_enqueue", lambda document_id: None)  # the test runs the pipeline itself
    collection = Collection.objects.create(slug="side-by-side", name="Side by side", chunk_size=32,
                                           embedding_mode="plain")
    documents = {source: services.document_ingest(collection=collection, source=source, data=data,
                                                  filename=source) for source, data in files.items()}
    real = embedding.embed_texts
    seen: list[list[str]] = []

    def embed(texts, **kwargs):
        if texts == ["hold"]:  # until every document's inputs wait in the encoder
            deadline = time.monotonic() + 300  # parsing and chunking first: slow on a busy machine
            while sum(1 for job in batches.ENCODER._jobs if job.waiting) < len(files):
                assert time.monotonic() < deadline, "the documents never reached the encoder"
                time.sleep(0.01)
            return np.zeros((1, 384), dtype=np.float32)
        seen.append(list(texts))
        if fail_on is not None and any(fail_on in t for t in texts):
            raise ValueError("this input cannot be encoded")
        return real(texts, **kwargs)

    monkeypatch.setattr(embedding, "embed_texts", embed)
    outcomes: dict[str, str] = {}

    def build(source: str) -> None:
        try:
            outcomes[source] = pipeline.process_document(documents[source].pk)
        finally:
            connection.close()

    holder = batches.ENCODER.submit(["hold"])
    threads = [threading.Thread(target=build, args=(source,)) for source in files]
    for thread in threads:
        thread.start()
    holder.vectors()
    for thread in threads:
        thread.join(600)
        assert not thread.is_alive(), "a document's build never ended"
    monkeypatch.setattr(embedding, "embed_texts", real)
    for document in documents.values():
        document.refresh_from_db()
    return outcomes, documents, seen


@pytest.mark.slow
@pytest.mark.usefixtures("eager_media")
@pytest.mark.django_db(transaction=True)
def test_documents_built_side_by_side_share_batches_and_each_gets_its_own_chunks(monkeypatch, settings):
    files = {"guide.md": GUIDE_V1, "notes.md": long_markdown(5)}
    outcomes, documents, seen = _build_side_by_side(monkeypatch, settings, files)

    assert outcomes == {"guide.md": "ready", "notes.md": "ready"}
    inputs = {}
    for source, document in documents.items():
        chunks = assert_chunks_tile(document)
        inputs[source] = [pipeline.embedding_input(c.context, c.text) for c in chunks]
        alone = embedding.embed_texts(inputs[source])
        stored = np.array([np.asarray(c.embedding) for c in chunks], dtype=np.float32)
        assert np.abs(stored - alone).max() < 1e-5, source
    # One batch held inputs of both documents, and every input was encoded exactly once.
    assert any(set(batch) & set(inputs["guide.md"]) and set(batch) & set(inputs["notes.md"]) for batch in seen)
    assert sorted(t for batch in seen for t in batch) == sorted(inputs["guide.md"] + inputs["notes.md"])


@pytest.mark.slow
@pytest.mark.usefixtures("eager_media")
@pytest.mark.django_db(transaction=True)
def test_a_document_failing_in_a_shared_batch_fails_alone(monkeypatch, settings):
    files = {"guide.md": GUIDE_V1, "broken.md": b"# Broken\n\nThis one says UNENCODABLE and cannot be embedded.\n"}
    outcomes, documents, seen = _build_side_by_side(monkeypatch, settings, files, fail_on="UNENCODABLE")

    assert outcomes == {"guide.md": "ready", "broken.md": "failed"}
    assert documents["broken.md"].status == Document.Status.FAILED
    assert documents["broken.md"].error == "Processing failed: this input cannot be encoded"
    assert not Chunk.objects.filter(document=documents["broken.md"]).exists()
    assert_chunks_tile(documents["guide.md"])
    assert len(seen[0]) > 1 and any("UNENCODABLE" in t for t in seen[0])  # they met in a batch first
