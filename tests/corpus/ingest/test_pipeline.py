"""corpus.ingest.pipeline: failures, contextualization, late chunking, concurrency and idempotency."""

from __future__ import annotations

import logging
import threading
import time

import numpy as np
import pytest
from django.db import connection

from corpus import services
from corpus.ingest import contextualize, pipeline
from corpus.models import Chunk, Collection, Document
from tests.chat.fake_openai import fake_llm, last_user_content  # noqa: F401
from tests.corpus.ingest_helpers import GUIDE_V1, assert_chunks_tile, eager_media, long_markdown  # noqa: F401

Status = Document.Status
pytestmark = pytest.mark.usefixtures("eager_media")


def make_collection(**fields) -> Collection:
    fields.setdefault("chunk_size", 32)
    fields.setdefault("chunk_overlap", 0)
    return Collection.objects.create(slug=fields.pop("slug", "notes"), name="Notes", **fields)


def ingest(collection, data, source, capture=None) -> Document:
    if capture is None:  # autocommit (transactional tests): on_commit runs at once
        document = services.document_ingest(collection=collection, source=source, data=data, filename=source)
    else:
        with capture(execute=True):
            document = services.document_ingest(collection=collection, source=source, data=data, filename=source)
    document.refresh_from_db()
    return document


@pytest.mark.django_db
def test_broken_files_fail_with_a_message_while_others_succeed(django_capture_on_commit_callbacks):
    collection = make_collection()
    broken = {
        "empty.txt": b"",
        "fake.pdf": b"%PDF-1.7\n this is not really a PDF \x00\x01\x02",
        "binary.md": bytes(range(256)) * 8,
    }
    failed = [ingest(collection, data, name, django_capture_on_commit_callbacks) for name, data in broken.items()]
    good = ingest(collection, GUIDE_V1, "guide.md", django_capture_on_commit_callbacks)

    for document in failed:
        assert document.status == Status.FAILED, document.source
        assert len(document.error) > 10 and "Traceback" not in document.error
        assert not Chunk.objects.filter(document=document).exists()
    assert failed[0].error == "The file is empty."
    assert good.status == Status.READY
    assert_chunks_tile(good)


@pytest.mark.django_db
def test_failed_reingest_keeps_the_previous_chunks(django_capture_on_commit_callbacks):
    collection = make_collection()
    document = ingest(collection, GUIDE_V1, "guide.md", django_capture_on_commit_callbacks)
    chunk_ids = list(Chunk.objects.filter(document=document).values_list("pk", flat=True))

    document = ingest(collection, b"", "guide.md", django_capture_on_commit_callbacks)

    assert document.status == Status.FAILED and document.error == "The file is empty."
    assert list(Chunk.objects.filter(document=document).values_list("pk", flat=True)) == chunk_ids
    assert "Aphids" in document.text  # text and chunks still agree


@pytest.mark.django_db
def test_running_twice_does_not_duplicate(django_capture_on_commit_callbacks):
    document = ingest(make_collection(), GUIDE_V1, "guide.md", django_capture_on_commit_callbacks)
    chunk_ids = list(Chunk.objects.filter(document=document).values_list("pk", flat=True))

    assert pipeline.process_document(document.pk) == "unchanged"
    assert list(Chunk.objects.filter(document=document).values_list("pk", flat=True)) == chunk_ids


@pytest.mark.django_db
def test_a_document_left_mid_way_by_a_lost_worker_is_rebuilt_once(django_capture_on_commit_callbacks):
    document = ingest(make_collection(), GUIDE_V1, "guide.md", django_capture_on_commit_callbacks)
    count = Chunk.objects.filter(document=document).count()
    Document.objects.filter(pk=document.pk).update(status=Status.EMBEDDING, progress_done=1, progress_total=5)

    assert pipeline.process_document(document.pk) == "ready"
    document.refresh_from_db()

    assert document.status == Status.READY
    assert len(assert_chunks_tile(document)) == count


@pytest.mark.django_db
def test_missing_document_is_reported_not_raised():
    assert pipeline.process_document(987654) == "missing"


@pytest.mark.django_db(transaction=True)
def test_a_document_held_by_another_worker_is_busy():
    document = ingest(make_collection(), GUIDE_V1, "guide.md")
    taken, release = threading.Event(), threading.Event()

    def other_worker():
        with pipeline.document_lock(document.pk) as acquired:
            assert acquired
            taken.set()
            release.wait(10)
        connection.close()

    thread = threading.Thread(target=other_worker)
    thread.start()
    try:
        assert taken.wait(10)
        with pytest.raises(pipeline.DocumentBusy):
            pipeline.process_document(document.pk)
    finally:
        release.set()
        thread.join()
    assert pipeline.process_document(document.pk) == "unchanged"


@pytest.mark.django_db(transaction=True)
def test_search_during_reingest_sees_old_or_new_chunks_never_a_mix():
    collection = make_collection(chunk_size=48)
    old_data = long_markdown(12).replace(b"Field notes", b"Alpha notes")
    new_data = long_markdown(90).replace(b"Field notes", b"Omega notes")
    document = ingest(collection, old_data, "notes.md")
    old_text = document.text
    assert document.status == Status.READY

    errors: list[BaseException] = []

    def reingest():
        try:
            services.document_ingest(collection=collection, source="notes.md", data=new_data, filename="notes.md")
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=reingest)
    thread.start()
    seen = {"old": 0, "new": 0}
    statuses_while_old = set()
    while True:
        # Decided before the read: the last read starts after the re-ingest has committed.
        finished = not thread.is_alive()
        # One statement = one snapshot, like one search query.
        rows = list(Chunk.objects.filter(document__collection=collection).order_by("chunk_index")
                    .values_list("text", "document__text", "document__status"))
        joined = "".join(text for text, _, _ in rows)
        if joined == old_text:
            seen["old"] += 1
            statuses_while_old.add(rows[0][2])
        else:
            assert rows and joined == rows[0][1] and "Omega notes" in joined, "a mix of old and new chunks"
            seen["new"] += 1
        if finished:
            break
        time.sleep(0.01)
    thread.join()

    assert not errors
    document.refresh_from_db()
    assert document.status == Status.READY
    assert seen["old"] > 0 and seen["new"] > 0
    # Old chunks stayed searchable while the new ones were being embedded.
    assert Status.EMBEDDING in statuses_while_old
    assert "Omega notes" in "".join(c.text for c in assert_chunks_tile(document))


@pytest.mark.django_db
def test_llm_modes_without_an_llm_fall_back_to_headers(settings, caplog, django_capture_on_commit_callbacks):
    settings.LLM_BASE_URL = settings.LLM_MODEL = ""
    collection = make_collection(contextualization=Collection.Contextualization.CONTEXTUAL)
    with caplog.at_level(logging.INFO, logger="corpus.ingest.contextualize"):
        document = ingest(collection, GUIDE_V1, "guide.md", django_capture_on_commit_callbacks)

    assert document.status == Status.READY
    assert "falls back to contextual chunk headers" in caplog.text
    pests = Chunk.objects.get(document=document, text__contains="Aphids")
    assert pests.context == "Garden guide > Pests"


@pytest.mark.django_db
def test_contextual_retrieval_asks_once_per_chunk_with_the_document(fake_llm, django_capture_on_commit_callbacks):  # noqa: F811
    def reply(request):
        prompt = last_user_content(request)
        if "Aphids gather" in prompt.split("<chunk>")[1]:
            raise RuntimeError("the LLM server falls over")  # connection dropped: a transient error
        return "This chunk is part of a gardening guide."

    fake_llm.reply = reply
    collection = make_collection(contextualization=Collection.Contextualization.CONTEXTUAL)
    document = ingest(collection, GUIDE_V1, "guide.md", django_capture_on_commit_callbacks)

    assert document.status == Status.READY
    chunks = assert_chunks_tile(document)
    assert len(fake_llm.requests) == len(chunks)
    prompt = last_user_content(fake_llm.requests[0])
    assert prompt.startswith(f"<document>\n{document.text}\n</document>\n")
    assert prompt.endswith(
        "Please give a short succinct context to situate this chunk within the overall document for the purposes "
        "of improving search retrieval of the chunk. Answer only with the succinct context and nothing else.")
    for chunk in chunks:
        if "Aphids gather" in chunk.text:
            assert chunk.context == "Garden guide > Pests"  # this chunk's call failed: header only
        else:
            assert chunk.context.endswith("\nThis chunk is part of a gardening guide.")
            assert "gardening guide" not in chunk.text


@pytest.mark.django_db
def test_autocontext_heads_chunks_with_an_llm_title_and_summary(fake_llm, django_capture_on_commit_callbacks):  # noqa: F811
    fake_llm.reply = lambda request: "Growing tomatoes at home\nA short guide to sun, soil and pests for tomato plants."
    collection = make_collection(contextualization=Collection.Contextualization.AUTOCONTEXT)
    document = ingest(collection, GUIDE_V1, "guide.md", django_capture_on_commit_callbacks)

    assert document.status == Status.READY
    assert len(fake_llm.requests) == 1
    assert document.summary == "A short guide to sun, soil and pests for tomato plants."
    pests = Chunk.objects.get(document=document, text__contains="Aphids")
    assert pests.context == ("Document: Growing tomatoes at home\n"
                             "A short guide to sun, soil and pests for tomato plants.\n"
                             "Section: Garden guide > Pests")


def test_chunk_header_skips_a_heading_equal_to_the_title():
    assert contextualize.chunk_header("Garden guide", ["Garden guide", "Pests"]) == "Garden guide > Pests"
    assert contextualize.chunk_header("", []) == ""


@pytest.mark.django_db
def test_late_chunking_gives_normalised_context_aware_vectors(django_capture_on_commit_callbacks):
    plain = ingest(make_collection(slug="plain", embedding_mode=Collection.EmbeddingMode.PLAIN), GUIDE_V1,
                   "guide.md", django_capture_on_commit_callbacks)
    late = ingest(make_collection(slug="late", embedding_mode=Collection.EmbeddingMode.LATE), GUIDE_V1,
                  "guide.md", django_capture_on_commit_callbacks)

    plain_chunks, late_chunks = assert_chunks_tile(plain), assert_chunks_tile(late)
    assert [c.text for c in plain_chunks] == [c.text for c in late_chunks]
    similarities = [float(np.dot(p.embedding, q.embedding)) for p, q in zip(plain_chunks, late_chunks, strict=True)]
    assert all(0.3 < s < 0.999 for s in similarities), similarities  # related, but not the same vectors


@pytest.mark.django_db
def test_neighbours_mode_blends_each_chunk_with_its_neighbours(django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setattr(Collection, "NEIGHBOUR_WEIGHT", 0.5)
    plain = ingest(make_collection(slug="plain", embedding_mode=Collection.EmbeddingMode.PLAIN), GUIDE_V1,
                   "guide.md", django_capture_on_commit_callbacks)
    blended = ingest(make_collection(slug="blended"), GUIDE_V1, "guide.md", django_capture_on_commit_callbacks)

    assert blended.collection.embedding_mode == Collection.EmbeddingMode.NEIGHBOURS  # the default
    plain_vectors = np.array([c.embedding for c in assert_chunks_tile(plain)])
    blended_vectors = np.array([c.embedding for c in assert_chunks_tile(blended)])
    assert len(plain_vectors) >= 3
    middle = plain_vectors[1] + 0.5 * (plain_vectors[0] + plain_vectors[2])
    assert np.allclose(blended_vectors[1], middle / np.linalg.norm(middle), atol=1e-5)
    assert np.allclose(np.linalg.norm(blended_vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.django_db
def test_changing_the_neighbour_weight_rebuilds_on_reingest(settings, monkeypatch):
    collection = make_collection()
    before = collection.pipeline_signature()
    monkeypatch.setattr(Collection, "NEIGHBOUR_WEIGHT", 0.1)
    assert collection.pipeline_signature() != before
    collection.embedding_mode = Collection.EmbeddingMode.PLAIN
    plain = collection.pipeline_signature()
    monkeypatch.setattr(Collection, "NEIGHBOUR_WEIGHT", 0.2)
    assert collection.pipeline_signature() == plain  # plain vectors do not depend on it


# --- bounds, cancellation and stalled documents ---

@pytest.mark.django_db
def test_a_document_over_the_chunk_ceiling_fails_before_embedding(settings, monkeypatch,
                                                                   django_capture_on_commit_callbacks):
    monkeypatch.setattr(pipeline, "MAX_CHUNKS_PER_DOCUMENT", 5)
    embedded = []
    monkeypatch.setattr(pipeline.embedding, "embed_texts", lambda texts, **kw: embedded.append(texts) or 1 / 0)

    document = ingest(make_collection(chunker="recursive"), long_markdown(30), "notes.md",
                      django_capture_on_commit_callbacks)

    assert document.status == Status.FAILED
    assert document.error == ("The document would make more than 5 chunks, the limit per document; "
                              "split it into smaller files.")
    assert not embedded and not Chunk.objects.filter(document=document).exists()


@pytest.mark.django_db
def test_a_long_line_without_spaces_becomes_bounded_chunks(django_capture_on_commit_callbacks):
    data = b"Header line\n" + b"x" * 1_000_000 + b"\nlast line\n"
    document = ingest(make_collection(chunk_size=200), data, "line.txt", django_capture_on_commit_callbacks)

    assert document.status == Status.READY, document.error
    chunks = list(Chunk.objects.filter(document=document).order_by("chunk_index"))
    assert len(chunks) >= 1_000_000 // 3200
    assert max(len(c.text) for c in chunks) <= 3200
    assert "".join(c.text for c in chunks) == document.text


def _embed_then(action, calls):
    """An embed_texts stand-in that runs `action` after its first call (another request, meanwhile)."""
    def embed(texts, **kwargs):
        calls.append(len(texts))
        if len(calls) == 1:
            action()
        vectors = np.random.default_rng(0).normal(size=(len(texts), 384)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return embed


@pytest.mark.django_db
def test_deleting_a_document_mid_embedding_stops_its_run(settings, monkeypatch):
    settings.EMBEDDING_BATCH_SIZE = 2  # progress (and a check for deletion) every 2 chunks
    # In a test transaction the task enqueued on commit never runs: the test runs the pipeline itself.
    document = services.document_ingest(collection=make_collection(), source="notes.md", data=long_markdown(40),
                                        filename="notes.md")
    calls: list[int] = []
    monkeypatch.setattr(pipeline.embedding, "embed_texts",
                        _embed_then(lambda: Document.objects.filter(pk=document.pk).delete(), calls))

    assert pipeline.process_document(document.pk) == "missing"
    assert len(calls) == 1  # stopped after the batch that was running
    assert not Chunk.objects.filter(document_id=document.pk).exists()


@pytest.mark.django_db
def test_new_content_mid_embedding_stops_the_old_run(settings, monkeypatch):
    settings.EMBEDDING_BATCH_SIZE = 2
    # In a test transaction the task enqueued on commit never runs: the test runs the pipeline itself.
    document = services.document_ingest(collection=make_collection(), source="notes.md", data=long_markdown(40),
                                        filename="notes.md")
    calls: list[int] = []

    def new_upload():
        Document.objects.filter(pk=document.pk).update(content_hash="0" * 64, status=Status.QUEUED)

    monkeypatch.setattr(pipeline.embedding, "embed_texts", _embed_then(new_upload, calls))

    assert pipeline.process_document(document.pk) == "superseded"
    assert len(calls) == 1
    document.refresh_from_db()
    assert document.status == Status.QUEUED and not document.error  # left to the new content's run
    assert not Chunk.objects.filter(document=document).exists()


@pytest.mark.django_db(transaction=True)
def test_a_document_left_in_progress_by_a_dead_worker_is_found_and_requeued():
    collection = make_collection()
    stalled = Document.objects.create(collection=collection, source="a.md", status=Status.EMBEDDING,
                                      progress_done=3, progress_total=9)
    running = Document.objects.create(collection=collection, source="b.md", status=Status.CHUNKING)
    Document.objects.create(collection=collection, source="c.md", status=Status.QUEUED)
    taken, release = threading.Event(), threading.Event()

    def live_worker():
        with pipeline.document_lock(running.pk) as acquired:
            assert acquired
            taken.set()
            release.wait(10)
        connection.close()

    thread = threading.Thread(target=live_worker)
    thread.start()
    try:
        assert taken.wait(10)
        assert pipeline.stalled_document_ids() == [stalled.pk]
        assert pipeline.requeue_stalled() == [stalled.pk]
    finally:
        release.set()
        thread.join()
    stalled.refresh_from_db()
    running.refresh_from_db()
    assert (stalled.status, stalled.progress_done) == (Status.QUEUED, 0)
    assert running.status == Status.CHUNKING


@pytest.mark.django_db
def test_embedding_progress_moves_with_every_batch_embedded(settings, monkeypatch):
    settings.EMBEDDING_BATCH_SIZE = 4
    document = services.document_ingest(collection=make_collection(embedding_mode="plain"), source="notes.md",
                                        data=long_markdown(12), filename="notes.md")
    seen: list[tuple[int, int]] = []
    calls: list[int] = []

    def embed(texts, **kwargs):
        calls.append(len(texts))
        seen.append(Document.objects.values_list("progress_done", "progress_total").get(pk=document.pk))
        vectors = np.ones((len(texts), 384), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    monkeypatch.setattr(pipeline.embedding, "embed_texts", embed)
    assert pipeline.process_document(document.pk) == "ready"
    total = Document.objects.get(pk=document.pk).progress_total
    assert total > 8 and calls == [4] * (total // 4) + ([total % 4] if total % 4 else [])
    # Before each batch the count shows every chunk embedded so far, one batch at a time.
    assert [done for done, _ in seen] == [4 * i for i in range(len(calls))]


@pytest.mark.django_db
def test_a_file_is_read_as_what_it_is_stored_as_not_as_its_source_name_says(django_capture_on_commit_callbacks):
    # A web source stores a page as Markdown ("page.md") under its URL, which may end in ".html".
    page = (b"# Purple zebras of the Tarn valley\n\nMs. Halvorsen guides the purple zebras across the Tarn "
            b"river each spring.\n\n## Visiting\n\nVisitors watch the crossing from the old stone bridge.\n")
    with django_capture_on_commit_callbacks(execute=True):
        document = services.document_ingest(collection=make_collection(), source="https://zebras.example/index.html",
                                            data=page, filename="page.md")
    document.refresh_from_db()
    assert document.status == Status.READY
    assert (document.title, document.media_type) == ("Purple zebras of the Tarn valley", "text/markdown")
    assert "spring.\n\n## Visiting" in document.text  # read as Markdown: its lines and headings kept


@pytest.mark.django_db
def test_a_changed_text_file_keeps_the_title_its_name_gives_not_its_storage_name(django_capture_on_commit_callbacks):
    collection = make_collection()
    first = ingest(collection, b"relay settings live in main.cf.\n", "guides/postfix-basic.txt",
                   django_capture_on_commit_callbacks)
    # The changed file is stored while the old one is still there: Django gives it a suffix.
    second = ingest(collection, b"relay settings live in main.cf, and more.\n", "guides/postfix-basic.txt",
                    django_capture_on_commit_callbacks)
    assert first.pk == second.pk and second.status == Status.READY
    assert second.file.name != "postfix-basic.txt" and "postfix-basic_" in second.file.name
    assert second.title == "postfix-basic"
    assert {c.context for c in Chunk.objects.filter(document=second)} == {"postfix-basic"}


@pytest.mark.django_db
def test_plain_text_sections_give_chunks_their_heading_path(django_capture_on_commit_callbacks):
    paragraph = b"The relay host takes the mail of the whole network and keeps it until the link is up.\n"
    data = (b"Postfix Basic Configuration\n\nIntroduction\n\n" + paragraph * 3
            + b"\nWhat clients to relay mail from\n\n"
            + b"By default, Postfix will forward mail from clients in authorized network blocks.\n" + paragraph * 3)
    document = ingest(make_collection(chunk_size=48), data, "postfix.txt", django_capture_on_commit_callbacks)
    assert document.title == "Postfix Basic Configuration"
    chunks = list(Chunk.objects.filter(document=document).order_by("chunk_index"))
    relay = next(c for c in chunks if "forward mail from clients" in c.text)
    assert relay.text.startswith("What clients to relay mail from\n\nBy default")
    assert relay.heading_path == "What clients to relay mail from"
    assert relay.context == "Postfix Basic Configuration > What clients to relay mail from"
    assert not any(c.text.rstrip().endswith("What clients to relay mail from") for c in chunks if c is not relay)
