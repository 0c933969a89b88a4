"""corpus.ingest.onnx_export and embed.start_graph_export: one export of the float32 graph, begun early by make
run's first start and waited for (not repeated) by whoever loads the model next."""

from __future__ import annotations

import fcntl
import threading

from corpus.ingest import embed as embedding
from corpus.ingest import onnx_export

MODEL = embedding.PACKAGED_MODEL


def test_loading_waits_for_an_export_under_way_and_does_not_export_again(tmp_path):
    dest = tmp_path / "models" / "m-float32.onnx"
    dest.parent.mkdir()
    with open(dest.with_name(dest.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as an export begun by start_float32 holds it
        waiter = threading.Thread(target=onnx_export.ensure_float32, args=(embedding.model_path(MODEL), dest))
        waiter.start()
        waiter.join(timeout=3)
        assert waiter.is_alive()  # waiting for the export under way
        dest.write_bytes(b"the graph that export wrote")
    waiter.join(timeout=60)
    assert not waiter.is_alive()
    assert dest.read_bytes() == b"the graph that export wrote"  # found, not exported a second time


def test_a_first_start_exports_only_a_missing_float32_graph(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    assert embedding.start_graph_export(MODEL) is None  # torch: no graph
    assert embedding.start_graph_export(f"{MODEL}@onnx-int8") is None  # shipped in the repository
    (tmp_path / "models").mkdir()
    graph = tmp_path / "models" / f"{MODEL}-float32.onnx"
    graph.write_bytes(b"exported before")
    assert embedding.start_graph_export(f"{MODEL}@onnx") is None

    graph.unlink()
    export = embedding.start_graph_export(f"{MODEL}@onnx")
    try:
        assert export.args[-2:] == [embedding.model_path(MODEL), str(graph)]
        assert export.poll() is None  # exporting in a child process, in the background
    finally:
        export.kill()
        export.wait()


def test_the_export_child_says_nothing_when_it_succeeds(tmp_path):
    # make run's first start runs it beside its own messages: torch's exporter warnings and a progress bar
    # there read as trouble to a person starting ragweb for the first time.
    import subprocess

    dest = tmp_path / "m-float32.onnx"
    done = subprocess.run(onnx_export._export_command(embedding.model_path(MODEL), dest), cwd=onnx_export.PROJECT,
                          capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert dest.stat().st_size > 50_000_000  # the float32 graph (~90 MB)
