from chat.evaluation.management.commands.bench_ingest import timed_stages
from corpus.ingest import pipeline


def test_timed_stages_counts_a_stage_and_puts_the_pipeline_back():
    original = pipeline.parse_document
    with timed_stages() as seconds:
        assert pipeline.parse_document is not original
        parsed = pipeline.parse_document(b"# Title\n\nSome text.\n", filename="a.md")
    assert parsed.title == "Title"
    assert seconds["parse"] > 0 and set(seconds) == {"parse"}
    assert pipeline.parse_document is original


def test_the_benchmark_compares_the_pipeline_with_a_bare_encode_of_the_configured_runtime(
        transactional_db, tmp_path):
    """On the default runtime (ONNX) too: the bare encode once called SentenceTransformer's encode()
    arguments, which the ONNX encoder does not take."""
    import re
    from io import StringIO

    from django.core.management import call_command

    (tmp_path / "a.md").write_text("# Tides\n\n" + "The tide turns twice a day at the harbour wall. " * 40)
    out = StringIO()
    # transactional_db: the command commits as it does from a shell (ingestion is queued on commit).
    call_command("bench_ingest", str(tmp_path), collection="bench-ingest-test", stdout=out)
    text = out.getvalue()
    assert re.search(r"documents: 1 \(0 failed\), chunks: [1-9]", text)
    pipeline_rate = float(re.search(r"pipeline:\s+[\d.]+ s\s+([\d.]+) chunks/s", text).group(1))
    bare_rate = float(re.search(r"bare encode:\s+[\d.]+ s\s+([\d.]+) chunks/s", text).group(1))
    assert pipeline_rate > 0 and bare_rate > 0
