"""corpus.ingest.embed: normalised batched vectors, batch planning, late chunking."""

from __future__ import annotations

import os

import numpy as np
import pytest

from chat.retrieval import query_batching
from chat.retrieval.query_batching import embed_queries
from corpus.ingest import embed as embedding
from corpus.ingest.tokens import tokenize

TORCH = embedding.PACKAGED_MODEL
INT8 = f"{embedding.PACKAGED_MODEL}@onnx-int8"


def test_embed_texts_matches_plain_encode_and_is_normalised(settings):
    settings.EMBEDDING_MODEL = TORCH
    texts = ["short", "a much longer sentence about tomatoes and their watering " * 6, "mid-length words"]

    vectors = embedding.embed_texts(texts)
    reference = embedding.get_model().encode(texts, normalize_embeddings=True)

    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors, reference, atol=1e-5)
    assert embedding.embed_texts([]).shape == (0, 384)
    assert np.allclose(embedding.embed_texts(texts[:1])[0], vectors[0], atol=1e-5)


def test_one_batch_bypasses_encode_and_gets_exactly_its_vectors(monkeypatch, settings):
    import torch

    queries = ["How often should tomatoes be watered?", "aphids", "Which roses need full sun (plot 12)?",
               "What did the notes say about compost and worms? " * 40]  # the last one beyond 256 tokens
    model = embedding.get_model(TORCH)
    monkeypatch.setattr(query_batching, "QUERY_EMBEDDING_THREADS", 1)
    expected = []
    for n, threads in ((1, 1), (4, 2)):  # the bits depend on the thread count: encode() on the same as each call
        torch.set_num_threads(threads)
        expected.append(model.encode(queries[:n], normalize_embeddings=True, convert_to_numpy=True))
    calls = []
    monkeypatch.setattr(model, "encode", lambda *a, **k: calls.append(a) or pytest.fail("encode() was called"))

    got = [embed_queries(queries[:1], model=TORCH), embedding.embed_texts(queries, threads=2, model=TORCH)]

    assert calls == []
    for vectors, reference in zip(got, expected, strict=True):
        assert vectors.dtype == np.float32 and vectors.shape == reference.shape
        assert np.array_equal(vectors, reference)  # bit for bit, not merely close


def test_queries_of_a_model_with_encode_only_go_through_encode(settings):
    class EncodeOnly:
        def encode(self, texts, **kwargs):
            return np.tile(np.eye(384, dtype=np.float32)[:1], (len(texts), 1)) * 2

    embedding.register_model("encode-only", EncodeOnly, path=embedding.model_path())
    try:
        vectors = embedding.embed_texts(["one", "two"], model="encode-only")
    finally:
        embedding._factories.pop("encode-only")
        embedding._models.pop("encode-only", None)
    assert vectors.shape == (2, 384) and vectors[0, 0] == 2.0 and vectors[1, 0] == 2.0


def test_windows_overlap_by_half_and_cover_everything():
    assert embedding._windows(100, 500) == [(0, 100)]
    windows = embedding._windows(1200, 500)
    assert windows == [(0, 500), (250, 750), (500, 1000), (700, 1200)]
    assert all(end - start == 500 for start, end in windows)


def test_late_chunking_over_several_windows_gives_one_normalised_vector_per_span():
    text = " ".join(f"Sentence {i} is about topic {i % 7} in the garden." for i in range(300))
    spans = [(start, min(len(text), start + 400)) for start in range(0, len(text), 400)]

    vectors = embedding.late_chunk_embeddings(text, spans, tokens=tokenize(text), prefix="Garden notes")
    plain = embedding.embed_texts([text[s:e] for s, e in spans])

    assert vectors.shape == (len(spans), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = (vectors * plain).sum(axis=1)
    assert similarity.min() > 0.3 and similarity.max() < 0.999
    assert embedding.late_chunk_embeddings(text, [], tokens=tokenize(text)).shape == (0, 384)


def test_blend_neighbours_adds_weighted_neighbours_and_normalises():
    vectors = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)

    blended = embedding.blend_neighbours(vectors, 0.5)

    # First: own + 0.5 x next; middle: 0.5 x previous + own + 0.5 x next; last: 0.5 x previous + own.
    expected = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(blended, expected, atol=1e-6)
    assert blended.dtype == np.float32
    assert np.allclose(vectors[0], [1.0, 0.0, 0.0])  # the input is left alone


def test_blend_neighbours_with_weight_zero_or_one_chunk_only_normalises():
    vectors = np.array([[3.0, 4.0], [0.0, 2.0]], dtype=np.float32)
    assert np.allclose(embedding.blend_neighbours(vectors, 0.0), [[0.6, 0.8], [0.0, 1.0]])
    assert np.allclose(embedding.blend_neighbours(vectors[:1], 0.4), [[0.6, 0.8]])
    assert embedding.blend_neighbours(np.zeros((0, 2), dtype=np.float32), 0.4).shape == (0, 2)
    with pytest.raises(ValueError):
        embedding.blend_neighbours(vectors, -0.1)


def test_search_processes_let_openmp_threads_sleep_unless_told_otherwise(monkeypatch):
    import os

    from corpus.ingest.embed import prefer_idle_threads

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    prefer_idle_threads()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    prefer_idle_threads()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


def test_the_web_process_sets_the_policy_before_torch_loads():
    import os
    import subprocess
    import sys

    from django.conf import settings

    code = ("import os, sys; os.environ.pop('OMP_WAIT_POLICY', None); os.environ['RAGWEB_WARM_UP'] = '0'; "
            "import ragweb.wsgi; print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=settings.BASE_DIR, env={**os.environ, "DJANGO_SETTINGS_MODULE": "ragweb.settings"})
    assert out.stdout.split() == ["PASSIVE", "False"]


def test_queries_and_batches_embed_on_their_own_thread_counts(settings, monkeypatch):
    import torch

    settings.EMBEDDING_MODEL = TORCH  # torch's thread counts; ONNX Runtime's sessions own none
    settings.EMBEDDING_THREADS = 2
    monkeypatch.setattr(query_batching, "QUERY_EMBEDDING_THREADS", 1)
    texts = ["How do I add a field to a model?", "Migrations record changes to models."]
    batch = embedding.embed_texts(texts)
    assert torch.get_num_threads() == 2
    queries = embed_queries(texts)
    assert torch.get_num_threads() == 1
    assert np.allclose(queries, batch, atol=1e-5)
    assert np.allclose(embed_queries(texts[:1])[0], batch[0], atol=1e-5)
    text = "A field is a column. A model is a table."
    embedding.late_chunk_embeddings(text, [(0, 19), (20, 40)], tokens=tokenize(text))
    assert torch.get_num_threads() == 2  # late chunking is batch work
    monkeypatch.setattr(query_batching, "QUERY_EMBEDDING_THREADS", 0)  # one per available CPU
    embed_queries(texts[:1])
    assert torch.get_num_threads() == len(os.sched_getaffinity(0))


def test_documents_embed_on_one_thread_per_cpu_the_process_may_use(monkeypatch):
    """What lets a deployment limit the workers' threads with CPU affinity (compose's cpuset, systemd's
    CPUAffinity=) instead of a setting: EMBEDDING_THREADS, 0 by default, is for the benchmarks."""
    from corpus.ingest.onnx_encoder import OnnxEncoder

    threads, encode = [], OnnxEncoder.encode

    def counted(self, texts, **kwargs):
        threads.append(kwargs["threads"])
        return encode(self, texts, **kwargs)

    monkeypatch.setattr(OnnxEncoder, "encode", counted)
    everything = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(everything)})
        embedding.embed_texts(["Allowed one CPU."])
    finally:
        os.sched_setaffinity(0, everything)
    embedding.embed_texts(["Allowed them all."])
    assert threads == [1, len(everything)]


def test_a_runtime_suffix_names_the_runtime_and_the_same_model_directory():
    assert embedding.split_runtime(INT8) == (embedding.PACKAGED_MODEL, "onnx-int8")
    assert embedding.split_runtime(f"{embedding.PACKAGED_MODEL}@onnx") == (embedding.PACKAGED_MODEL, "onnx")
    assert embedding.split_runtime(TORCH) == (TORCH, "torch")
    assert embedding.split_runtime("/models/me@home") == ("/models/me@home", "torch")  # not a runtime
    assert embedding.model_path(INT8) == embedding.model_path(TORCH)


def test_the_default_model_is_onnx_float32_giving_torchs_vectors(settings):
    from corpus.ingest.onnx_encoder import OnnxEncoder

    assert settings.EMBEDDING_MODEL == f"{TORCH}@onnx"
    model = embedding.get_model()
    assert isinstance(model, OnnxEncoder) and model.graph == settings.VAR_DIR / "models" / f"{TORCH}-float32.onnx"
    assert model.dimensions == 384 and model.max_seq_length == 256 and not model.alone
    texts = ["How do I add a field to a model?", "Middleware is a framework of hooks. " * 20]
    assert np.allclose(embedding.embed_texts(texts), embedding.embed_texts(texts, model=TORCH), atol=1e-5)


def test_a_small_document_is_spread_over_every_thread_with_the_same_vectors(monkeypatch):
    """A document of fewer chunks than threads x batch size runs as one batch per thread, not one
    batch on one thread while the others idle (bench_ingest: the embedding step 74 -> 35 s on 60
    Django pages of ~17 chunks each); padding is masked, so the vectors do not change."""
    from corpus.ingest import onnx_encoder

    model = embedding.get_model()
    texts = [f"Chunk {i} of a small page about tides and harbours. " * (1 + i % 5) for i in range(18)]
    batches = []
    real = onnx_encoder.run_parallel
    monkeypatch.setattr(onnx_encoder, "run_parallel",
                        lambda function, items, *, threads: batches.append([len(b) for b in items]) or
                        real(function, items, threads=threads))
    spread = model.encode(texts, batch_size=32, threads=2)
    whole = model.encode(texts, batch_size=32, threads=1)
    assert batches == [[9, 9], [18]]
    assert np.allclose(spread, whole, atol=1e-5)


@pytest.mark.slow
def test_the_float32_graph_is_exported_in_a_child_process(tmp_path):
    """The process that asks for the graph (make run's parent, about to fork the app) never imports torch."""
    import subprocess
    import sys

    from django.conf import settings

    code = ("import sys; from corpus.ingest import onnx_export; from pathlib import Path; "
            f"path = onnx_export.ensure_float32({embedding.model_path(TORCH)!r}, Path({str(tmp_path / 'f.onnx')!r})); "
            "print(path.stat().st_size > 80e6, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=settings.BASE_DIR, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.stdout.split() == ["True", "False"]


@pytest.mark.slow
def test_int8_vectors_are_close_to_torchs_and_do_not_depend_on_batching():
    texts = ["How do I add a field to a model?", "aphids",
             "Middleware is a framework of hooks into Django's request/response processing. " * 3,
             "What did the notes say about compost and worms? " * 40]  # beyond 256 tokens: truncated alike

    torch_vectors = embedding.embed_texts(texts, model=TORCH)
    int8 = embedding.embed_texts(texts, model=INT8)
    one_by_one = np.concatenate([embed_queries([t], model=INT8) for t in texts])
    two_threads = embedding.get_model(INT8).encode(texts[::-1], batch_size=1, threads=2)[::-1]

    assert int8.shape == (4, 384) and int8.dtype == np.float32
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    cosines = (int8 * torch_vectors).sum(axis=1)
    assert cosines.min() > 0.98 and cosines.max() < 0.99999  # close, and yet another vector space
    # A text's int8 vector is the same whatever it is batched with (onnx_encoder: alone).
    assert np.array_equal(one_by_one, int8) and np.array_equal(two_threads, int8)


@pytest.mark.slow
def test_late_chunking_on_onnx_follows_late_chunking_on_torch(settings):
    text = " ".join(f"Sentence {i} is about topic {i % 7} in the garden." for i in range(120))
    spans = [(start, min(len(text), start + 300)) for start in range(0, len(text), 300)]

    settings.EMBEDDING_MODEL = TORCH
    on_torch = embedding.late_chunk_embeddings(text, spans, tokens=tokenize(text), prefix="Garden notes")
    settings.EMBEDDING_MODEL = INT8
    on_onnx = embedding.late_chunk_embeddings(text, spans, tokens=tokenize(text), prefix="Garden notes")

    assert on_onnx.shape == on_torch.shape == (len(spans), 384)
    assert (on_onnx * on_torch).sum(axis=1).min() > 0.98
