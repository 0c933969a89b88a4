import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from corpus.ingest.embed import embed_texts
from corpus.models import Chunk, Collection
from tests.chat.factories import make_collection, make_document

WORDS = ("apple banana cherry damson elder fig grape hazel iris juniper kale lemon mango nectar olive peach "
         "quince radish spinach tomato ugli vanilla walnut yam zucchini").split()
# Enough distinct words for the benchmark's vocabulary (100 or more).
PARTS = [" ".join(f"{w}{suffix}" for w in WORDS) + ". " for suffix in ("", "s", "ed", "ing", "er")]


@pytest.mark.django_db(transaction=True)  # the benchmark VACUUMs, which no transaction may hold
def test_benchmark_prints_every_figure_and_removes_its_scratch_collection(tmp_path):
    real = make_collection("orchard")
    make_document(real, "fruit.txt", PARTS, embeddings=embed_texts(PARTS))
    queries = tmp_path / "q.jsonl"
    # The questions are the real chunks' own text: the real document is found among the synthetic
    # ones (at this small scale random synthetic chunks often land high on both sides, so a loose
    # question need not find it).
    queries.write_text("".join(json.dumps({"id": f"q{n}", "question": part, "kind": "factoid",
                                           "source": "fruit.txt", "evidence": [WORDS[n]]}) + "\n"
                               for n, part in enumerate(PARTS[:3])))
    out = StringIO()
    call_command("bench_search", "--queries", str(queries), "--recall-collection", "orchard", "--chunks", "250",
                 "--repeat", "1", stdout=out)
    text = out.getvalue()
    assert "latency over 3 queries, 255 chunks in the table" in text
    for stage in ("embed", "candidates", "fusion", "rse", "total", "total-embed"):
        assert any(line.startswith(f"{stage} ") and len(line.split()) >= 3 for line in text.splitlines()), stage
    ratios = text.split("total without embedding / bare HNSW at p50: ")[1].splitlines()[0]
    assert "against the bare query after embedding" in ratios
    for stage in ("bare HNSW top-k", "  after embedding its query"):
        assert any(line.startswith(stage) and len(line.split()) >= 3 for line in text.splitlines()), stage
    mrr = float(text.split("searching both collections (their source among 255 chunks): ")[1].split()[0])
    assert 0.0 < mrr <= 1.0
    recall = text.split("filtered to orchard: ")[1]
    assert 0.0 <= float(recall.split(";")[0]) <= 1.0
    assert not Collection.objects.filter(slug="bench-scratch").exists()
    assert Chunk.objects.count() == len(PARTS)


@pytest.mark.django_db
def test_a_missing_or_malformed_queries_file_is_a_command_error(tmp_path):
    make_collection("orchard")
    with pytest.raises(CommandError, match="No such file"):
        call_command("bench_search", "--queries", str(tmp_path / "missing.jsonl"), "--recall-collection", "orchard")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q1", "question": "x", "kind": "factoid", "source": "a", "evidence": "x"}\n')
    with pytest.raises(CommandError, match="evidence must be a list"):
        call_command("bench_search", "--queries", str(bad), "--recall-collection", "orchard")
    assert not Collection.objects.filter(slug="bench-scratch").exists()
