"""`manage.py evaluate EVAL.jsonl --collection SLUG [--docs DIR] [--report DIR] [--k N] [--runs ...]`

Runs every retrieval mode on the evaluation questions and prints source recall@1/5/10, MRR@10,
evidence coverage (by question kind) and latency; writes report.json and report.png to --report.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from chat.answering.citations import CONTEXT_CHARS, build_citations
from chat.evaluation.metrics import (
    KINDS,
    EvalFormatError,
    Item,
    bootstrap_interval,
    coverage,
    first_source_rank,
    joined,
    load_items,
    mean,
    moved_questions,
    paired_mrr_difference,
    percentile,
    reciprocal_ranks,
)
from chat.retrieval import search, tuning
from corpus.models import Collection

# run name -> (search mode, RSE preset or None, fusion or None for tuning.FUSION)
RUNS = {
    "bm25": ("keyword", None, None),
    "vector": ("vector", None, None),
    "hybrid": ("hybrid", None, None),
    "hybrid:rrf": ("hybrid", None, "rrf"),  # reciprocal rank fusion, beside the configured fusion
    "hybrid+rse:balanced": ("hybrid", "balanced", None),
    "hybrid+rse:precision": ("hybrid", "precision", None),
    "hybrid+rse:find_all": ("hybrid", "find_all", None),
}
BUDGETS = (8000, 16000)
EXACT_EVERYWHERE = 2**31 - 1  # tuning.EXACT_MAX_CHUNKS under --exact


def evaluate_item(item: Item, collections, mode: str, rse: str | None, k: int, fusion: str | None = None) -> dict:
    def run(max_chars: int | None = None):
        return search(query=item.question, collections=collections, mode=mode, k=k, rse=rse, fusion=fusion,
                      max_chars=max_chars)

    result = run()
    sources = [c.document.source for c in result.chunks]
    chunk_texts = [c.text for c in result.chunks]
    row = {"id": item.id, "kind": item.kind, "rank": first_source_rank(sources, item.source),
           "timings_ms": result.timings_ms}
    if rse is None:
        context = chunk_texts
    else:
        context = [s.text for s in result.segments]
        own = joined(context)
        row["chars"] = len(own)
        row["segments"] = [[s.document.source, s.start, s.end] for s in result.segments]
        # Where the first segment from the source comes in RSE's order: what RSE gets right on an
        # eval set that gives sources only, with no evidence phrases to cover.
        row["segment_rank"] = first_source_rank([s.document.source for s in result.segments], item.source)
        row["coverage_own"] = coverage(item.evidence, own)
        row["topk_coverage_own"] = coverage(item.evidence, joined(chunk_texts, len(own)))
        for budget in BUDGETS:
            # RSE told the budget (as the answer path tells it its own): segments trimmed around
            # their best chunks instead of a cut that drops whatever comes after a long segment.
            fitted_context = [s.text for s in run(max_chars=budget).segments]
            row[f"fitted_coverage_{budget}"] = coverage(item.evidence, joined(fitted_context, budget))
            row[f"fitted_chars_{budget}"] = len(joined(fitted_context))
        # What an answer's numbered sources hold: the search given the chat's budget, made into
        # sources by the code that gives them to the LLM (chat.citations; at most 8 sources, so k
        # beyond that changes nothing).
        answer_sources = [c["text"] for c in build_citations(run(max_chars=CONTEXT_CHARS))]
        row["answer_coverage"] = coverage(item.evidence, joined(answer_sources))
        row["answer_chars"] = len(joined(answer_sources))
    for budget in BUDGETS:
        row[f"coverage_{budget}"] = coverage(item.evidence, joined(context, budget))
    return row


def summarise(rows: list[dict]) -> dict:
    ranks = [r["rank"] for r in rows]
    reciprocal = reciprocal_ranks(ranks)
    summary = {
        "n": len(rows),
        "recall@1": mean(1.0 if r is not None and r <= 1 else 0.0 for r in ranks),
        "recall@5": mean(1.0 if r is not None and r <= 5 else 0.0 for r in ranks),
        "recall@10": mean(1.0 if r is not None else 0.0 for r in ranks),
        "mrr@10": mean(reciprocal),
        "mrr@10_interval": bootstrap_interval(reciprocal),
    }
    for kind in KINDS:
        subset = [r for r in rows if r["kind"] == kind]
        for budget in BUDGETS:
            summary[f"{kind}_coverage_{budget}"] = _mean_known(r[f"coverage_{budget}"] for r in subset)
        if subset and "coverage_own" in subset[0]:
            summary[f"{kind}_coverage_own"] = _mean_known(r["coverage_own"] for r in subset)
            summary[f"{kind}_topk_coverage_own"] = _mean_known(r["topk_coverage_own"] for r in subset)
            summary[f"{kind}_chars"] = mean(r["chars"] for r in subset)
            for budget in BUDGETS:
                summary[f"{kind}_fitted_coverage_{budget}"] = _mean_known(r[f"fitted_coverage_{budget}"]
                                                                          for r in subset)
            summary[f"{kind}_answer_coverage"] = _mean_known(r["answer_coverage"] for r in subset)
    if rows and "segment_rank" in rows[0]:
        summary["segment_mrr@10"] = mean(reciprocal_ranks(r["segment_rank"] for r in rows))
        summary["chars"] = mean(r["chars"] for r in rows)
        for budget in BUDGETS:
            summary[f"fitted_chars_{budget}"] = mean(r[f"fitted_chars_{budget}"] for r in rows)
        summary["answer_chars"] = mean(r["answer_chars"] for r in rows)
    totals = [r["timings_ms"]["total"] for r in rows]
    summary["latency_p50_ms"] = percentile(totals, 50)
    summary["latency_p95_ms"] = percentile(totals, 95)
    stages = sorted({s for r in rows for s in r["timings_ms"]})
    summary["stage_p50_ms"] = {s: percentile([r["timings_ms"][s] for r in rows if s in r["timings_ms"]], 50)
                               for s in stages}
    return summary


def _mean_known(values) -> float:
    """Mean over the questions that have a value (coverage is None without evidence); NaN if none."""
    return mean(v for v in values if v is not None)


def compare_mrr(rows: dict[str, list[dict]], base: str = "hybrid",
                others: tuple[str, ...] = ("vector", "bm25", "hybrid:rrf")) -> dict[str, dict]:
    """MRR@10 of `base` minus each of `others` on the same questions, with the paired bootstrap
    interval of the difference: whether a gap is more than which questions happened to be asked."""
    if base not in rows:
        return {}
    return {f"{base} - {other}": paired_mrr_difference([r["rank"] for r in rows[base]],
                                                       [r["rank"] for r in rows[other]])
            for other in others if other in rows}


def compare_with_baseline(rows: dict[str, list[dict]], baseline: dict) -> dict[str, dict]:
    """Per run found in both: this report's MRR@10 minus the baseline report's on the questions both
    asked (paired interval), and the questions whose source rank moved."""
    result = {}
    for name, current in rows.items():
        before = {row["id"]: row for row in baseline.get("items", {}).get(name, [])}
        shared = [row for row in current if row["id"] in before]
        if shared:
            result[name] = paired_mrr_difference([r["rank"] for r in shared], [before[r["id"]]["rank"] for r in shared])
            result[name]["moved"] = moved_questions([before[r["id"]] for r in shared], shared)
    return result


def format_baseline(comparison: dict[str, dict], path: Path) -> str:
    lines = [f"against {path} (MRR@10 difference on the same questions, 95% paired interval; questions moved):"]
    for name, c in comparison.items():
        moved = ", ".join(f"{qid} {_rank(a)}->{_rank(b)}" for qid, a, b in c["moved"]) or "none"
        lines.append(f"  {name:22} {c['difference']:+.3f} [{c['interval'][0]:+.3f}, {c['interval'][1]:+.3f}]  {moved}")
    return "\n".join(lines)


def _rank(rank: int | None) -> str:
    return "-" if rank is None else str(rank)


def format_intervals(summaries: dict[str, dict], comparisons: dict[str, dict]) -> str:
    n = next(iter(summaries.values()))["n"] if summaries else 0
    parts = [f"{name} {_f(s['mrr@10'])} [{_f(s['mrr@10_interval'][0])}, {_f(s['mrr@10_interval'][1])}]"
             for name, s in summaries.items() if "+" not in name]
    parts += [f"{name} {c['difference']:+.3f} [{c['interval'][0]:+.3f}, {c['interval'][1]:+.3f}]"
              for name, c in comparisons.items()]
    return f"MRR@10 with 95% bootstrap intervals over the {n} questions (paired for differences): " + "; ".join(parts)


def _f(value, digits=3) -> str:
    return "-" if value is None or value != value else f"{value:.{digits}f}"


def format_table(summaries: dict[str, dict]) -> str:
    header = (f"{'run':22} {'R@1':>5} {'R@5':>5} {'R@10':>5} {'MRR10':>5} | {'F@8k':>5} {'S@8k':>5} "
              f"{'F@16k':>5} {'S@16k':>5} | {'F@own':>5} {'S@own':>5} {'kF@own':>6} {'kS@own':>6} "
              f"{'chars':>6} {'segMRR':>6} | {'p50ms':>6} {'p95ms':>6}")
    lines = [header, "-" * len(header)]
    for name, s in summaries.items():
        lines.append(
            f"{name:22} {_f(s['recall@1'], 2):>5} {_f(s['recall@5'], 2):>5} {_f(s['recall@10'], 2):>5} "
            f"{_f(s['mrr@10']):>5} | {_f(s['factoid_coverage_8000'], 2):>5} {_f(s['section_coverage_8000'], 2):>5} "
            f"{_f(s['factoid_coverage_16000'], 2):>5} {_f(s['section_coverage_16000'], 2):>5} | "
            f"{_f(s.get('factoid_coverage_own'), 2):>5} {_f(s.get('section_coverage_own'), 2):>5} "
            f"{_f(s.get('factoid_topk_coverage_own'), 2):>6} {_f(s.get('section_topk_coverage_own'), 2):>6} "
            f"{_f(s.get('chars'), 0):>6} {_f(s.get('segment_mrr@10')):>6} | "
            f"{_f(s['latency_p50_ms'], 1):>6} {_f(s['latency_p95_ms'], 1):>6}")
    lines.append("R@k = source recall@k, MRR10 = MRR@10 of chunks; F/S = evidence coverage of factoid/section "
                 "questions: context cut to 8k/16k chars, and (RSE runs) at RSE's own length 'own' vs. the top-k "
                 "chunks cut to that same length (kF/kS); chars = mean RSE context length; segMRR = MRR@10 of "
                 "RSE's segments (the first from the source); latency = total incl. query embedding.")
    fitted = [(name, s) for name, s in summaries.items() if "fitted_chars_8000" in s]
    if fitted:
        columns = [(f"{budget // 1000}k", f"fitted_coverage_{budget}", f"fitted_chars_{budget}") for budget in BUDGETS]
        columns.append(("ans", "answer_coverage", "answer_chars"))
        header = f"{'RSE given the budget':22}" + " |".join(
            f" {'F@' + label:>5} {'S@' + label:>5} {'chars':>6}" for label, _, _ in columns)
        lines += ["", header, "-" * len(header)]
        for name, s in fitted:
            lines.append(f"{name:22}" + " |".join(
                f" {_f(s.get(f'factoid_{key}'), 2):>5} {_f(s.get(f'section_{key}'), 2):>5} {_f(s[chars], 0):>6}"
                for _, key, chars in columns))
        lines.append("Coverage of RSE's segments when the search is given the budget (max_chars, as the answer path "
                     "gives its own): segments trimmed from their least valuable ends, the top chunks they lack taking "
                     "part, then cut; chars = mean length. "
                     f"ans = the sources an answer gets ({CONTEXT_CHARS:,} characters, chat.answering.citations).")
    return "\n".join(lines)


def write_chart(summaries: dict[str, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(summaries)
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    axes[0].bar(names, [summaries[n]["mrr@10"] for n in names], color="#4477aa")
    axes[0].set_title("MRR@10 (source)")
    axes[0].set_ylim(0, 1)
    width = 0.2
    for i, (key, label) in enumerate([("factoid_coverage_8000", "factoid @8k"),
                                      ("section_coverage_8000", "section @8k"),
                                      ("factoid_coverage_16000", "factoid @16k"),
                                      ("section_coverage_16000", "section @16k")]):
        axes[1].bar([x + i * width for x in range(len(names))], [summaries[n][key] for n in names], width,
                    label=label)
    axes[1].set_xticks([x + 1.5 * width for x in range(len(names))], names)
    axes[1].set_title("Evidence coverage at fixed budgets")
    axes[1].set_ylim(0, 1)
    axes[1].legend(fontsize=8)
    rse = [n for n in names if "section_coverage_own" in summaries[n]]
    for i, (key, label) in enumerate([("factoid_coverage_own", "RSE factoid"),
                                      ("factoid_topk_coverage_own", "top-k factoid"),
                                      ("section_coverage_own", "RSE section"),
                                      ("section_topk_coverage_own", "top-k section")]):
        axes[2].bar([x + i * width for x in range(len(rse))], [summaries[n][key] for n in rse], width, label=label)
    axes[2].set_xticks([x + 1.5 * width for x in range(len(rse))], rse)
    axes[2].set_title("RSE vs top-k at RSE's own length")
    axes[2].set_ylim(0, 1)
    axes[2].legend(fontsize=8)
    for ax in axes:
        ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _without_nan(value):
    """NaN (a mean over no questions) as null: NaN is not JSON, and other tools reject it."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _without_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_without_nan(v) for v in value]
    return value


class Command(BaseCommand):
    help = "Evaluate retrieval on an evaluation JSONL (../shared/eval format) against one collection."

    def add_arguments(self, parser):
        parser.add_argument("eval_file", type=Path)
        parser.add_argument("--collection", required=True, help="Slug of the collection holding the corpus.")
        parser.add_argument("--docs", type=Path, help="The corpus folder: checks every item's source is there.")
        parser.add_argument("--report", type=Path, default=Path("var/eval"), help="Folder for report.json/.png.")
        parser.add_argument("--k", type=int, default=40, help="Chunks retrieved per question (context pool).")
        parser.add_argument("--runs", nargs="+", choices=list(RUNS), default=list(RUNS))
        parser.add_argument("--limit", type=int, help="Only the first N questions.")
        parser.add_argument("--baseline", type=Path,
                            help="An earlier report.json: print what moved since, per run and question.")
        parser.add_argument("--exact", action="store_true",
                            help="Exact vector search instead of HNSW: runs then differ by their settings only, "
                                 "not by the approximate graph (which moves as chunks are added and deleted).")

    def handle(self, *args, exact: bool, **options):
        if not exact:
            return self._evaluate(**options)
        # Every collection counts as small enough for the exact scan.
        saved, tuning.EXACT_MAX_CHUNKS = tuning.EXACT_MAX_CHUNKS, EXACT_EVERYWHERE
        try:
            return self._evaluate(**options)
        finally:
            tuning.EXACT_MAX_CHUNKS = saved

    def _evaluate(self, *, eval_file: Path, collection: str, docs: Path | None, report: Path, k: int,
                  runs: list[str], limit: int | None, baseline: Path | None, **options):
        try:
            items = load_items(eval_file)
        except (OSError, EvalFormatError) as exc:
            raise CommandError(str(exc)) from exc
        if limit:
            items = items[:limit]
        previous = None
        if baseline is not None:
            try:
                previous = json.loads(baseline.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise CommandError(f"Cannot read the baseline report {baseline}: {exc}") from exc
            if not isinstance(previous, dict) or not isinstance(previous.get("items"), dict):
                raise CommandError(f"{baseline} is not a report written by evaluate.")
        collections = Collection.objects.filter(slug=collection)
        if not collections.exists():
            raise CommandError(f"There is no collection {collection!r}; ingest the corpus first.")
        if docs is not None:
            missing = [i.source for i in items if not (docs / i.source).is_file()]
            if missing:
                raise CommandError(f"{len(missing)} sources are not in {docs}: {', '.join(missing[:5])}")
        search(query="warm up", collections=collections, k=1, rse=None)  # load the model outside the timings

        rows: dict[str, list[dict]] = {}
        started = time.perf_counter()
        for name in runs:
            mode, rse, fusion = RUNS[name]
            rows[name] = [evaluate_item(item, collections, mode, rse, k, fusion) for item in items]
            self.stderr.write(f"{name}: done ({time.perf_counter() - started:.0f}s)")
        summaries = {name: summarise(r) for name, r in rows.items()}
        comparisons = compare_mrr(rows)
        self.stdout.write(format_table(summaries))
        self.stdout.write(format_intervals(summaries, comparisons))
        against = None
        if previous is not None:
            against = compare_with_baseline(rows, previous)
            self.stdout.write(format_baseline(against, baseline))

        report.mkdir(parents=True, exist_ok=True)
        # The operator's settings and the engine's tuned constants: what a run's figures depend on.
        config = {name: getattr(settings, name) for name in dir(settings) if name.startswith("SEARCH_")}
        config |= {f"tuning.{name}": getattr(tuning, name) for name in dir(tuning) if name.isupper()}
        payload = {"eval_file": str(eval_file), "collection": collection, "questions": len(items), "k": k,
                   "settings": config, "summary": summaries, "mrr_comparisons": comparisons,
                   "baseline": None if baseline is None else {"report": str(baseline), "runs": against}, "items": rows}
        (report / "report.json").write_text(json.dumps(_without_nan(payload), indent=1, allow_nan=False))
        write_chart(summaries, report / "report.png")
        self.stdout.write(f"report: {report / 'report.json'}, chart: {report / 'report.png'}")
