import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from chat.retrieval import tuning
from corpus.ingest.embed import embed_texts
from tests.chat.factories import make_collection, make_document

pytestmark = pytest.mark.django_db

BREAD = ["# Bread\n\nBread needs flour, water, salt and yeast. ", "Knead the dough for ten minutes. ",
         "Let the dough rise for an hour until doubled. ", "Bake the loaf at 230 degrees for 35 minutes. "]
BIKES = ["# Bikes\n\nA flat tyre is fixed by patching the inner tube. ",
         "Adjust the brakes so the pads touch the rim. "]
ITEMS = [
    {"id": "q1", "question": "How long should bread dough rise?", "kind": "factoid", "source": "bread.md",
     "evidence": ["rise for an hour"]},
    {"id": "q2", "question": "How do I fix a flat tyre on my bike?", "kind": "factoid", "source": "bikes.md",
     "evidence": ["patching the inner tube"]},
    {"id": "q3", "question": "What are the steps of baking bread?", "kind": "section", "source": "bread.md",
     "evidence": ["Knead the dough", "Bake the loaf at 230 degrees"]},
]
RUNS = ["bm25", "vector", "hybrid", "hybrid+rse:balanced"]


@pytest.fixture
def eval_file(tmp_path):
    col = make_collection("kitchen")
    for source, parts in (("bread.md", BREAD), ("bikes.md", BIKES)):
        make_document(col, source, parts, embeddings=embed_texts(parts))
    path = tmp_path / "eval.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    return path


def _evaluate(eval_file, report, *extra):
    out = StringIO()
    call_command("evaluate", str(eval_file), "--collection", "kitchen", "--report", str(report), "--runs", *RUNS,
                 *extra, stdout=out, stderr=StringIO())
    return out.getvalue(), json.loads((report / "report.json").read_text())


def test_writes_the_table_report_and_chart(eval_file, tmp_path):
    out, report = _evaluate(eval_file, tmp_path / "first")
    assert out.splitlines()[0].split()[:5] == ["run", "R@1", "R@5", "R@10", "MRR10"]
    assert "MRR@10 with 95% bootstrap intervals over the 3 questions" in out
    assert set(report["summary"]) == set(report["items"]) == set(RUNS)
    hybrid = report["summary"]["hybrid"]
    assert hybrid["n"] == 3 and hybrid["mrr@10"] == 1.0 and tuple(hybrid["mrr@10_interval"]) == (1.0, 1.0)
    assert [row["rank"] for row in report["items"]["hybrid"]] == [1, 1, 1]
    assert report["items"]["hybrid+rse:balanced"][2]["coverage_own"] == 1.0  # both steps in the segment
    rse_rows = report["items"]["hybrid+rse:balanced"]
    assert [row["segment_rank"] for row in rse_rows] == [
        next(i for i, seg in enumerate(row["segments"], start=1) if seg[0] == item["source"])
        for row, item in zip(rse_rows, ITEMS, strict=True)]
    assert report["summary"]["hybrid+rse:balanced"]["segment_mrr@10"] == pytest.approx(
        sum(1 / row["segment_rank"] for row in rse_rows) / 3)
    assert "segment_mrr@10" not in hybrid
    rse_line = next(line for line in out.splitlines() if line.startswith("hybrid+rse:balanced"))
    assert rse_line.split("|")[2].split()[-1] == f"{report['summary']['hybrid+rse:balanced']['segment_mrr@10']:.3f}"
    assert report["mrr_comparisons"]["hybrid - vector"]["difference"] == pytest.approx(
        hybrid["mrr@10"] - report["summary"]["vector"]["mrr@10"])
    assert (tmp_path / "first" / "report.png").read_bytes().startswith(b"\x89PNG")
    assert report["baseline"] is None
    # The whole corpus fits either budget: RSE told the budget trims nothing, and fills the room
    # with the returned chunks its segments lack, the same at both budgets.
    for row in rse_rows:
        assert row["fitted_coverage_8000"] == row["fitted_coverage_16000"] >= row["coverage_own"]
        assert row["fitted_chars_8000"] == row["fitted_chars_16000"] >= row["chars"]
        assert row["answer_coverage"] == row["fitted_coverage_8000"]  # the answer's sources: the same
    assert any(row["fitted_chars_8000"] > row["chars"] for row in rse_rows)
    fitted_line = [line for line in out.splitlines() if line.startswith("hybrid+rse:balanced")][1]
    summary = report["summary"]["hybrid+rse:balanced"]
    assert fitted_line.split()[1:4] == [f"{summary['factoid_fitted_coverage_8000']:.2f}",
                                        f"{summary['section_fitted_coverage_8000']:.2f}",
                                        f"{summary['fitted_chars_8000']:.0f}"]


def test_baseline_shows_what_moved(eval_file, tmp_path):
    _, first = _evaluate(eval_file, tmp_path / "first")
    # A doctored baseline: q2 was found at rank 3 by the hybrid run then.
    first["items"]["hybrid"][1]["rank"] = 3
    (tmp_path / "first" / "report.json").write_text(json.dumps(first))
    out, second = _evaluate(eval_file, tmp_path / "second", "--baseline", str(tmp_path / "first" / "report.json"))
    assert "q2 3->1" in out
    moved = second["baseline"]["runs"]
    assert moved["hybrid"]["moved"] == [["q2", 3, 1]]
    assert moved["hybrid"]["difference"] == pytest.approx((1 - 1 / 3) / 3)
    assert moved["vector"]["moved"] == [] and moved["vector"]["difference"] == 0.0


def test_bad_baseline_and_bad_eval_file_are_command_errors(eval_file, tmp_path):
    (tmp_path / "not-a-report.json").write_text("[1, 2]")
    with pytest.raises(CommandError, match="is not a report written by evaluate"):
        _evaluate(eval_file, tmp_path / "r", "--baseline", str(tmp_path / "not-a-report.json"))
    with pytest.raises(CommandError, match="Cannot read the baseline report"):
        _evaluate(eval_file, tmp_path / "r", "--baseline", str(tmp_path / "missing.json"))
    eval_file.write_text('{"id": "x"}\n')
    with pytest.raises(CommandError, match="not an evaluation item"):
        _evaluate(eval_file, tmp_path / "r")


def test_questions_without_evidence_count_for_ranks_but_not_coverage(eval_file, tmp_path):
    # q2 loses its evidence and q3 (the only section question) goes: sources-only eval sets are valid.
    items = [ITEMS[0], {**ITEMS[1], "evidence": []}]
    eval_file.write_text("".join(json.dumps(item) + "\n" for item in items))
    out, report = _evaluate(eval_file, tmp_path / "r")
    hybrid = report["summary"]["hybrid"]
    assert hybrid["n"] == 2 and hybrid["mrr@10"] == 1.0
    assert report["items"]["hybrid"][1]["coverage_8000"] is None
    assert hybrid["factoid_coverage_8000"] == 1.0  # q1 alone, not (1 + 0) / 2
    assert hybrid["section_coverage_8000"] is None  # no section questions: null, not NaN
    assert "NaN" not in (tmp_path / "r" / "report.json").read_text()
    hybrid_line = next(line for line in out.splitlines() if line.startswith("hybrid "))
    assert hybrid_line.split()[6:8] == ["1.00", "-"]  # F@8k over q1, S@8k unknown
    rse = report["summary"]["hybrid+rse:balanced"]
    rse_chars = [row["chars"] for row in report["items"]["hybrid+rse:balanced"]]
    assert rse["chars"] == pytest.approx(sum(rse_chars) / 2)  # over every question, sections or not
    rse_line = next(line for line in out.splitlines() if line.startswith("hybrid+rse:balanced"))
    assert rse_line.split("|")[2].split()[-2] == f"{rse['chars']:.0f}"


def test_exact_searches_vectors_without_the_hnsw_graph(eval_file, tmp_path, settings, monkeypatch):
    from chat.retrieval import candidates
    from corpus.graph.merge import graph_merge

    graph_merge()  # published chunks wait outside the graph until merged; this test is about the graph
    # The kitchen is tiny: it is scanned exactly unless no collection counts as small and the HNSW
    # scan finds the candidates asked for (3 of its 6 chunks).
    monkeypatch.setattr(tuning, "EXACT_MAX_CHUNKS", 0)
    monkeypatch.setattr(tuning, "CANDIDATES", 3)
    scans = []
    real_run = candidates._run

    def recording_run(sides, params, filters, source):
        found = real_run(sides, params, filters, source)
        if found.vector_scan:
            scans.append(found.vector_scan)
        return found

    monkeypatch.setattr(candidates, "_run", recording_run)
    _, report = _evaluate(eval_file, tmp_path / "hnsw", "--k", "3")
    assert scans and set(scans) == {"hnsw"}
    scans.clear()
    _, exact = _evaluate(eval_file, tmp_path / "exact", "--k", "3", "--exact")
    assert scans and set(scans) == {"exact"}
    assert exact["settings"]["tuning.EXACT_MAX_CHUNKS"] == 2**31 - 1
    assert report["settings"]["tuning.EXACT_MAX_CHUNKS"] == 0
    assert tuning.EXACT_MAX_CHUNKS == 0  # --exact put the constant back
    assert report["settings"]["tuning.CANDIDATES"] == 3 and report["settings"]["tuning.BM25_K1"] == 1.2
    assert [r["rank"] for r in exact["items"]["hybrid"]] == [r["rank"] for r in report["items"]["hybrid"]]
