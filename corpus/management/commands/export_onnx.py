"""`manage.py export_onnx [--out DIR]`: build the packaged model's int8 ONNX graph that the
repository ships (corpus/ingest/onnx/), from the weights in the installed package (no download).

Build-time only (torch, onnx from requirements-dev.txt). Prints each file's size and SHA-256 and
the cosine of its vectors to the torch ones on a few sentences, as a first check; `make
bench-embed` measures speed and retrieval quality.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand

from corpus.ingest import embed as embedding
from corpus.ingest import onnx_export
from corpus.ingest.onnx_encoder import OnnxEncoder

SAMPLES = ["How do I add a field to a model?", "Middleware is a framework of hooks into request/response "
           "processing.", "The tomatoes in plot 12 need water twice a week in July and August." * 4]


class Command(BaseCommand):
    help = "Export the packaged embedding model to ONNX and quantise it to int8 (the shipped graph)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--out", default=str(embedding.PACKAGED_INT8_GRAPH.parent),
                            help="Directory for the int8 graph (default: the shipped one's).")

    def handle(self, *args, out: str, **options) -> None:
        directory = embedding.model_path(embedding.PACKAGED_MODEL)
        dest = Path(out) / embedding.PACKAGED_INT8_GRAPH.name
        with tempfile.TemporaryDirectory() as scratch:
            float32 = onnx_export.export_float32(directory, Path(scratch) / "float32.onnx")
            onnx_export.quantize_int8(float32, dest)
        reference = embedding.embed_texts(SAMPLES, model=embedding.PACKAGED_MODEL)
        vectors = OnnxEncoder(directory, dest).encode(SAMPLES)
        digest = hashlib.sha256(dest.read_bytes()).hexdigest()
        self.stdout.write(f"{dest}: {dest.stat().st_size / 1e6:.1f} MB, sha256 {digest}")
        self.stdout.write(f"cosine to torch float32: min {np.min((reference * vectors).sum(axis=1)):.4f}")
