"""A sentence-transformers model run by ONNX Runtime: the model's own tokenizer, the transformer
as an ONNX graph, mean pooling and L2 normalisation in numpy.

It gives what SentenceTransformer.encode(..., normalize_embeddings=True) gives for a
Transformer + mean Pooling (+ Normalize) model such as all-MiniLM-L6-v2: the same tokens (the
model's tokenizer.json, truncated at its max_seq_length), the same pooling. The float32 graph gives
the torch vectors to ~1e-7; the int8 graph (onnx_export.quantize_int8) is another vector space,
close to them (cosine ~0.99), so corpus.ingest.embed names it as a model of its own.

No torch here: a process that embeds only through this class never imports it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from django.core.exceptions import ImproperlyConfigured

from lib.onnx_sessions import load_session, run_parallel

# sentence-transformers' default when the model says nothing (sentence_bert_config.json).
DEFAULT_MAX_SEQ_LENGTH = 256


class OnnxEncoder:
    """The model in directory `model_dir` (tokenizer and sentence-transformers configuration),
    its transformer the ONNX graph `graph` (inputs input_ids, attention_mask, token_type_ids;
    output the token embeddings). The session is loaded here, once, and may be shared by forked
    children (lib.onnx_sessions)."""

    def __init__(self, model_dir: str | Path, graph: str | Path, *, alone: bool = False) -> None:
        """alone: run every text as a batch of its own. A dynamically quantised graph needs it for
        its vectors to be a function of the text: it quantises each activation tensor with one
        scale over the whole batch, so a text's int8 vector moved with its batch-mates (and their
        padding) by up to 0.006 a component, as much as int8 differs from float32; one text a run
        gives it the same vector as a chunk, a query or a sentence (and costs no padding)."""
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        pooling = model_dir / "1_Pooling" / "config.json"
        if pooling.is_file() and not json.loads(pooling.read_text()).get("pooling_mode_mean_tokens"):
            raise ImproperlyConfigured(f"{model_dir}: only mean pooling runs on ONNX Runtime here.")
        config = model_dir / "sentence_bert_config.json"
        self.max_seq_length = (json.loads(config.read_text()).get("max_seq_length") if config.is_file()
                               else None) or DEFAULT_MAX_SEQ_LENGTH
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # The saved tokenizer truncates and pads to a fixed 128: batches are padded to their longest.
        self.tokenizer.enable_truncation(self.max_seq_length)
        pad = self.tokenizer.padding or {}
        self.tokenizer.enable_padding(pad_id=pad.get("pad_id", 0), pad_token=pad.get("pad_token", "[PAD]"))
        self.cls_id = self.tokenizer.token_to_id("[CLS]")
        self.sep_id = self.tokenizer.token_to_id("[SEP]")
        self.graph = Path(graph)
        self.alone = alone
        self.session = load_session(self.graph)
        self.dimensions = int(self.session.get_outputs()[0].shape[-1])

    def ids(self, text: str) -> list[int]:
        """`text`'s token ids, without special tokens and without truncation."""
        return self.tokenizer.encode(text, add_special_tokens=False).ids if text else []

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                       "token_type_ids": np.zeros_like(ids)})[0]

    def _batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        tokens = self._run(ids, mask)
        weights = mask[:, :, None].astype(np.float32)
        means = (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(means, axis=1, keepdims=True)
        return (means / np.maximum(norms, 1e-12)).astype(np.float32)

    def encode(self, texts: list[str], *, batch_size: int = 32, threads: int = 1) -> np.ndarray:
        """(len(texts), dimensions) float32, L2-normalised. Texts are sorted by length and cut into
        batches of `batch_size` (less padding; one text each when `alone`), run on up to `threads`
        threads at once."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if self.alone:
            batch_size = 1
        elif threads > 1:
            # Fewer texts than threads x batch_size (a document of 18 chunks): smaller batches, so that
            # every thread gets one rather than one thread the whole document while the others idle.
            batch_size = max(1, min(batch_size, -(-len(texts) // threads)))
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        batches = [[texts[i] for i in order[s: s + batch_size]] for s in range(0, len(order), batch_size)]
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
        vectors[order] = np.concatenate(run_parallel(self._batch, batches, threads=threads))
        return vectors

    def token_vectors(self, ids: list[int]) -> np.ndarray:
        """The transformer's output vector of every token of one sequence of ids (special tokens
        included, none added, no truncation: at most the model's 512 positions), (len(ids), dims)."""
        array = np.array([ids], dtype=np.int64)
        return self._run(array, np.ones_like(array))[0]
