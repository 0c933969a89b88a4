"""Exporting a sentence-transformers model's transformer to ONNX, and quantising it to int8.

Exporting needs torch and onnx. `manage.py export_onnx` writes the int8 graph of the packaged model
that the repository ships (corpus/ingest/onnx/), so that every worker on every machine runs the very
same file; the float32 graph (the default runtime's), 90 MB, too big to commit, is exported on first
use into VAR_DIR/models (corpus.ingest.embed), in a child process: the process that asked, often one
about to fork the app's workers, never imports torch. Its vectors are torch's to ~1e-7 (cosine
1.0000), so where it was exported does not matter.

`python -m corpus.ingest.onnx_export MODEL_DIR DEST` is that child; it holds a file lock beside DEST while it
exports, so that a second one (another process that asked at the same time) waits and then finds the graph.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

# ONNX opset of the export: ONNX Runtime 1.31 runs it, the quantiser reads it.
OPSET = 17
PROJECT = Path(__file__).resolve().parents[2]


def export_float32(model_dir: str | Path, dest: str | Path) -> Path:
    """Write the transformer of the model in `model_dir` as an ONNX graph at `dest`: inputs
    input_ids, attention_mask, token_type_ids (int64, batch x sequence), output token_embeddings
    (batch x sequence x hidden), both axes dynamic. Written to a temporary name and renamed, so a
    reader never sees half a file."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True, attn_implementation="eager")
    model.eval()

    class Transformer(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    example = torch.ones((2, 16), dtype=torch.long)
    axes = {0: "batch", 1: "sequence"}
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + f".{os.getpid()}.partial")
    with torch.inference_mode():
        # The TorchScript exporter (dynamo=False): the dynamo one needs onnxscript, not installed.
        torch.onnx.export(Transformer(model), (example, torch.ones_like(example), torch.zeros_like(example)),
                          str(partial), input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["token_embeddings"], opset_version=OPSET, dynamo=False,
                          dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                                        "token_embeddings": axes})
    partial.replace(dest)
    return dest


def quantize_int8(source: str | Path, dest: str | Path) -> Path:
    """Dynamic int8 quantisation of the float32 graph `source` into `dest`: weights int8 per output
    channel, activations quantised at run time. Only matrix products with a constant weight are
    quantised (MatMulConstBOnly): quantising attention's activation-by-activation products as well
    dropped the vectors' cosine to the float32 ones from 0.993 to 0.946 on development-corpus
    chunks, and per-tensor weights (not per channel) to 0.947."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    dest = Path(dest)
    partial = dest.with_name(dest.name + f".{os.getpid()}.partial")
    quantize_dynamic(str(source), str(partial), weight_type=QuantType.QInt8, per_channel=True,
                     extra_options={"MatMulConstBOnly": True, "DefaultTensorType": onnx.TensorProto.FLOAT})
    partial.replace(dest)
    return dest


def _once(dest: Path, build) -> Path:
    """`dest`, built by build(dest) if it is not there yet: one process builds, the others wait
    for it (a file lock beside it)."""
    if dest.is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest.with_name(dest.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not dest.is_file():
            build(dest)
    return dest


def _export_command(model_dir: str | Path, dest: Path) -> list[str]:
    return [sys.executable, "-m", "corpus.ingest.onnx_export", str(model_dir), str(dest)]


def ensure_float32(model_dir: str | Path, dest: Path) -> Path:
    """The float32 graph of the model in `model_dir` at `dest`, exported on first use by a child
    process (torch stays out of this one); the child takes the file lock, so this waits for an
    export that start_float32 began."""
    if not dest.is_file():
        subprocess.run(_export_command(model_dir, dest), cwd=PROJECT, check=True)
    return dest


def start_float32(model_dir: str | Path, dest: Path) -> subprocess.Popen | None:
    """Begin exporting the float32 graph to `dest` in a child process and return it (None when the
    graph is there already): make run's first start exports while the database migrates, and its
    ensure_float32 afterwards waits for this child rather than export again."""
    if dest.is_file():
        return None
    return subprocess.Popen(_export_command(model_dir, dest), cwd=PROJECT)


def ensure_int8(float32: Path, dest: Path) -> Path:
    """The int8 graph quantised from `float32` at `dest`, on first use."""
    return _once(dest, lambda path: quantize_int8(float32, path))


if __name__ == "__main__":  # the child of ensure_float32 and start_float32: exports unless another did
    import warnings

    from transformers.utils import logging as transformers_logging

    # Quiet on success: torch's notes on the TorchScript exporter (deprecated, tracer warnings on the
    # model's shape checks) and transformers' weight-loading bar are all this child would print into
    # make run's first start, and none asks anything of the person starting it. A failure still raises.
    warnings.simplefilter("ignore")
    transformers_logging.disable_progress_bar()
    _once(Path(sys.argv[2]), lambda path: export_float32(sys.argv[1], path))
