import json
import re
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from chat.evaluation.synthetic_corpus import BULK_INDEXES, Bases, calibrate_noise
from corpus.graph.merge import graph_merge
from corpus.ingest.embed import embed_texts
from corpus.models import Chunk, Collection
from tests.chat.factories import make_collection, make_document

TOPICS = ("orchards", "harbours", "glaciers", "violins", "compilers", "bakeries", "volcanoes", "tramways",
          "beehives", "lighthouses")
# 60 chunks of three sentences each, ten topics: enough bases for the benchmark (50 or more).
PARTS = [f"The {topic} of region {n} are described here. Visitors to the {topic} come in spring. "
         f"Records of the {topic} go back {n + 10} years. " for n in range(6) for topic in TOPICS]


def _real_collection():
    real = make_collection("atlas")
    make_document(real, "atlas.txt", PARTS, embeddings=embed_texts(PARTS))
    return real


@pytest.mark.django_db
def test_synthetic_vectors_sit_as_far_from_their_base_as_really_embedded_recombinations():
    bases = Bases.of(_real_collection())
    rng = np.random.default_rng(0)
    corpus_sentences = {s for sentences in bases.sentences for s in sentences}
    text = bases.recombine(0, rng)
    own = set(bases.sentences[0])
    parts = [s if s.endswith(".") else s + "." for s in text.split(". ")]
    assert set(parts) <= corpus_sentences  # real sentences, recombined
    assert len(set(parts) & own) == 2  # three sentences: one swapped for another chunk's
    sigma, cosine = calibrate_noise(bases, rng, sample=40)
    noisy = bases.vectors + rng.standard_normal(bases.vectors.shape).astype(np.float32) * sigma
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    reached = float(np.mean(np.sum(noisy * bases.vectors, axis=1)))
    assert abs(reached - cosine) < 0.03
    assert 0 < sigma < 1


@pytest.mark.django_db(transaction=True)  # the benchmark VACUUMs, which no transaction may hold
def test_benchmark_grows_measures_rebuilds_the_indexes_and_cleans_up(tmp_path):
    _real_collection()
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": f"q{n}", "question": f"When do visitors come to the {topic}?",
                                           "kind": "factoid", "source": "atlas.txt", "evidence": [topic]}) + "\n"
                               for n, topic in enumerate(TOPICS[:3])))
    out = StringIO()
    call_command("bench_scale", "--queries", str(queries), "--recall-collection", "atlas", "--sizes", "1000",
                 "--small-share", "0.1", stdout=out)
    text = out.getvalue()
    assert "-- 1,060 chunks searched (100 in the small collection)" in text
    assert re.search(r"disk [+-][\d,]+ MiB", text)  # rebuilt indexes may be smaller than the bloated ones before
    for publishers in (1, 2):
        assert re.search(rf"publish \(pipeline's publish step, 20 documents of 100 chunks, {publishers} at a time\): "
                         r"[\d,]+ chunks/s", text)
    for mode in ("hybrid", "vector", "keyword"):
        for clients in (1, 10):
            row = re.search(rf"^{mode} +{clients} +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)$", text, re.M)
            assert row, (mode, clients)
            p50, p95, p99, slowest = (float(row.group(i)) for i in range(1, 5))
            assert 0 < p50 <= p95 <= p99 <= slowest
    mrr = float(re.search(r"questions over all 1,060 chunks: ([\d.]+)", text).group(1))
    assert 0.0 < mrr <= 1.0
    whole, within = (float(x) for x in re.search(r"whole table ([\d.]+) .*small collection ([\d.]+)", text).groups())
    assert 0.5 <= whole <= 1.0 and 0.5 <= within <= 1.0
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname = ANY(%s)", [list(BULK_INDEXES)])
        assert {r[0] for r in cursor.fetchall()} == set(BULK_INDEXES)
    assert not Collection.objects.filter(slug__startswith="bench-scale").exists()
    assert Chunk.objects.count() == len(PARTS)


@pytest.mark.django_db
def test_bad_arguments_are_command_errors(tmp_path):
    _real_collection()
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "question": "x", "kind": "factoid", "source": "a", "evidence": ["x"]}\n')
    with pytest.raises(CommandError, match="at least 1000"):
        call_command("bench_scale", "--queries", str(queries), "--recall-collection", "atlas", "--sizes", "10")
    with pytest.raises(CommandError, match="no collection"):
        call_command("bench_scale", "--queries", str(queries), "--recall-collection", "nowhere")
    assert not Collection.objects.filter(slug__startswith="bench-scale").exists()


@pytest.mark.django_db(transaction=True)  # the publishers are threads with their own connections
def test_publish_only_measures_one_and_two_publishers_and_leaves_the_table_as_it_was():
    _real_collection()
    out = StringIO()
    call_command("bench_scale", "--publish-only", "--rounds", "2", "--recall-collection", "atlas", stdout=out)
    text = out.getvalue()
    assert f"{len(PARTS)} chunks in the table; shared_buffers " in text
    assert "load average" in text
    for publishers in (1, 2):
        runs = re.findall(rf"publish \(pipeline's publish step, 20 documents of 100 chunks, {publishers} at a time\): "
                          r"([\d,]+) chunks/s", text)
        assert len(runs) == 2 and all(int(r.replace(",", "")) > 0 for r in runs)
        assert re.search(rf"^{publishers} publisher\(s\): median [\d,]+ chunks/s, best [\d,]+ (PASS|FAIL)", text, re.M)
    assert not Collection.objects.filter(slug__startswith="bench-scale").exists()
    assert Chunk.objects.count() == len(PARTS)


@pytest.mark.django_db
def test_publish_only_needs_no_queries_but_the_full_run_does():
    _real_collection()
    with pytest.raises(CommandError, match="--queries is required"):
        call_command("bench_scale", "--recall-collection", "atlas")
    with pytest.raises(CommandError, match="--rounds must be"):
        call_command("bench_scale", "--publish-only", "--rounds", "0", "--recall-collection", "atlas")


@pytest.mark.django_db(transaction=True)  # the publishers are threads with their own connections
def test_publish_only_reports_the_graph_merge_and_searches_with_a_tail():
    _real_collection()
    graph_merge()
    out = StringIO()
    call_command("bench_scale", "--publish-only", "--rounds", "1", "--tail-search", "0,200", "--recall-collection",
                 "atlas", stdout=out)
    text = out.getvalue()
    assert re.search(r"^0 chunks outside the HNSW graph before the run$", text, re.M)
    merges = re.findall(r"graph merge of the ([\d,]+)-chunk tail: ([\d,]+) chunks/s", text)
    assert [m[0] for m in merges] == ["2,000", "2,000"] and all(int(m[1].replace(",", "")) > 0 for m in merges)
    rows = re.findall(r"^ *([\d,]+) (hybrid|vector|keyword) +([\d.]+) +([\d.]+) +([\d.]+)$", text, re.M)
    assert [(tail, mode) for tail, mode, *_ in rows] == [(tail, mode) for tail in ("0", "200")
                                                         for mode in ("hybrid", "vector", "keyword")]
    assert all(0 < float(p50) <= float(p95) <= float(slowest) for *_, p50, p95, slowest in rows)
    assert not Collection.objects.filter(slug__startswith="bench-scale").exists()
    assert Chunk.objects.count() == len(PARTS)
    with pytest.raises(CommandError, match="--tail-search sizes"):
        call_command("bench_scale", "--publish-only", "--tail-search", "-5", "--recall-collection", "atlas")


def _queries(tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": f"q{n}", "question": f"When do visitors come to the {topic}?",
                                           "kind": "factoid", "source": "atlas.txt", "evidence": [topic]}) + "\n"
                               for n, topic in enumerate(TOPICS[:3])))
    return queries


SUSTAINED_ROW = re.compile(r"^ +([\d.]+) +([\d,]+) +(-?[\d,]+) +([\d,]+) +([\d,]+) +([\d,]+) +(\d+) +([\d.]+|nan) "
                           r"+([\d.]+|nan)$", re.M)


@pytest.mark.django_db(transaction=True)  # publishers, merger and searcher are threads with their own connections
def test_sustained_upload_prints_rates_tail_and_p95_per_interval_and_cleans_up(tmp_path, monkeypatch):
    from corpus.graph import merge

    _real_collection()
    graph_merge()
    monkeypatch.setattr(merge, "TAIL_LIMIT", 300)  # a bound the tiny run reaches: the publishers merge too
    out = StringIO()
    call_command("bench_scale", "--queries", str(_queries(tmp_path)), "--recall-collection", "atlas",
                 "--sustained", "6", "--interval", "2", "--publishers", "2", stdout=out)
    text = out.getvalue()
    assert f"{len(PARTS)} chunks in the table, 0 outside the graph" in text
    assert "2 publisher(s) of 100-chunk documents, publishing paced to the merge (tail bound 300)" in text
    rows = SUSTAINED_ROW.findall(text)
    assert 1 <= len(rows) <= 4, text  # every 2 s, the last once the threads have finished (a busy machine: fewer)
    assert float(rows[-1][0]) >= 5.5
    assert sum(int(r[1].replace(",", "")) for r in rows) > 0
    # Bounded, whatever the machine's speed: the bound, plus a 100-chunk document per publisher published at once,
    # plus the batches other mergers hold (still counted until they commit; a publisher finding only those publishes).
    bound = 300 + 2 * 100 + 2 * merge.BATCH
    assert all(int(r[5].replace(",", "")) <= bound for r in rows)
    assert sum(int(r[6]) for r in rows) > 0  # the client searched meanwhile
    summary = re.search(r"^published ([\d,]+) chunks in [\d]+ s \([\d,]+/s\), merged ([\d,]+) \([\d,]+/s\); tail at "
                        r"most ([\d,]+) (PASS|FAIL) \(target <= 5,000\); hybrid p95 one client over the run "
                        r"([\d.]+) ms (PASS|FAIL) \(target < 150\)", text, re.M)
    assert summary, text
    assert int(summary.group(1).replace(",", "")) >= 100 and int(summary.group(3).replace(",", "")) <= bound
    assert summary.group(4) == "PASS"
    assert not Collection.objects.filter(slug__startswith="bench-scale").exists()
    assert Chunk.objects.count() == len(PARTS)


@pytest.mark.django_db(transaction=True)
def test_sustained_upload_without_the_bound_lets_the_tail_grow(tmp_path, monkeypatch):
    from chat.evaluation import sustained_upload

    _real_collection()
    graph_merge()
    monkeypatch.setattr(sustained_upload, "graph_merge", lambda **kw: merge_nothing)  # no background merger
    merge_nothing = type("Run", (), {"merged": 0})()
    out = StringIO()
    call_command("bench_scale", "--queries", str(_queries(tmp_path)), "--recall-collection", "atlas",
                 "--sustained", "3", "--interval", "3", "--publishers", "1", "--no-pace", "--keep", stdout=out)
    text = out.getvalue()
    assert "publishing unpaced" in text
    [row] = SUSTAINED_ROW.findall(text)
    published, merged, tail = (int(row[i].replace(",", "")) for i in (1, 2, 4))
    assert published > 0 and merged == 0
    kept = Chunk.objects.filter(document__collection__slug="bench-scale")
    assert tail == kept.count() == kept.filter(in_graph=False).count() >= 100  # nothing merged, nothing lost
    assert re.search(rf"kept the \d+ published documents \({tail:,} chunks outside the graph\)", text)
    with pytest.raises(CommandError, match="--queries is required"):
        call_command("bench_scale", "--sustained", "5", "--recall-collection", "atlas")
    with pytest.raises(CommandError, match="--interval within it"):
        call_command("bench_scale", "--queries", str(_queries(tmp_path)), "--sustained", "5", "--interval", "9",
                     "--recall-collection", "atlas")


@pytest.mark.django_db(transaction=True)
def test_sustained_upload_can_run_the_publishers_and_the_merger_at_a_lower_priority(tmp_path, monkeypatch):
    import os

    from django.db import connection

    from chat.evaluation import sustained_upload

    _real_collection()
    graph_merge()
    seen = set()

    def observed_merge(**kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = cursor.fetchone()[0]
        seen.add((os.getpriority(os.PRIO_PROCESS, 0), os.getpriority(os.PRIO_PROCESS, backend)))
        return graph_merge(**kwargs)

    monkeypatch.setattr(sustained_upload, "graph_merge", observed_merge)
    base = os.getpriority(os.PRIO_PROCESS, 0)
    lower = min(base + 3, 19)
    out = StringIO()
    call_command("bench_scale", "--queries", str(_queries(tmp_path)), "--recall-collection", "atlas",
                 "--sustained", "3", "--interval", "3", "--publishers", "1", "--nice", str(lower), stdout=out)
    assert f"publishers and merger at nice {lower};" in out.getvalue()
    assert seen == {(lower, lower)}  # the merger's thread and the backend serving it
    assert os.getpriority(os.PRIO_PROCESS, 0) == base  # this thread (the benchmark's main one) untouched
    with pytest.raises(CommandError, match="--nice must be from 0 to 19"):
        call_command("bench_scale", "--queries", str(_queries(tmp_path)), "--recall-collection", "atlas",
                     "--sustained", "3", "--interval", "3", "--nice", "20")
