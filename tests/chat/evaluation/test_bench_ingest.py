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
