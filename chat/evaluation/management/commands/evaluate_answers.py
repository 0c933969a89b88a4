"""`manage.py evaluate_answers EVAL.jsonl --collection SLUG [--unanswerable FILE] [--offtopic FILE]
[--conversations FILE...] [--evidence-target X]`

Runs the real answer pipeline (as the chat page does: rewrite, search, "not found" check, LLM or
extractive answer, grounding pass) over an evaluation set and prints, per question kind: evidence
in the answer text beside a naive baseline's (the first 550 characters of the best-ranked chunk),
the right document among the cited sources, the cited page (PDF items), mean answer length,
citation validity and the abstention rate; then one PASS/FAIL line per target
(chat.evaluation.targets). With LLM_BASE_URL set the answers come from that LLM.

The set is first checked against the collection as stored (chat.evaluation.set_check): an evidence
phrase the stored text lacks, a wrong page or an "unanswerable" question whose document says the
answer is an error, before anything is scored. See chat/evaluation/answers.py for the scores.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.answering import reading
from chat.evaluation.answer_sets import load_conversations, load_offtopic, load_unanswerable
from chat.evaluation.answers import run_item, run_offtopic, run_unanswerable, summarise
from chat.evaluation.conversations import run_conversation
from chat.evaluation.metrics import KINDS, EvalFormatError, load_items
from chat.evaluation.set_check import StoredCorpus, set_problems
from chat.evaluation.targets import DEVELOPMENT_EVIDENCE, check_targets
from corpus import llm
from corpus.models import Collection, Document

ROW_FORMAT = "{:<24} {:>4} {:>9} {:>9} {:>10} {:>5} {:>10} {:>6} {:>6} {:>9} {:>10}"


class Command(BaseCommand):
    help = ("Evaluate the answers (not just retrieval): evidence in the answer beside a naive baseline, cited "
            "document and page, abstention on unanswerable and off-topic questions, conversations.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("eval_file", type=Path, help="JSONL questions (the ../shared/eval format, "
                                                         "with an optional PDF page per item).")
        parser.add_argument("--collection", required=True, help="Slug of the collection holding the corpus.")
        parser.add_argument("--unanswerable", type=Path,
                            help="JSONL near-topic questions the documents do not answer (should be declined).")
        parser.add_argument("--offtopic", type=Path, help="JSONL off-topic questions that should be declined.")
        parser.add_argument("--conversations", type=Path, nargs="+", default=[],
                            help="JSONL conversations (follow-ups and topic switches; chat.evaluation.answer_sets).")
        parser.add_argument("--evidence-target", type=float, default=DEVELOPMENT_EVIDENCE,
                            help="Target for the evidence in factoid answers (0.85 development, 0.80 held-out).")
        parser.add_argument("--limit", type=int, help="Only the first N questions of each file.")
        parser.add_argument("--report", type=Path, default=Path("var/eval-answers"),
                            help="Folder for report.json (every answer with its scores).")
        parser.add_argument("--show", action="store_true", help="Print each answer as it comes.")
        parser.add_argument("--scorers", nargs="+", choices=reading.SCORERS, default=None,
                            help="Who chooses an extractive answer's quotes and says \"not found\": auto (the "
                                 "heuristic for prose, the reader for table rows), the reader, the heuristic, or "
                                 "several, side by side (the make targets: auto heuristic). Default: the app's own "
                                 "(auto when the reader's model is present). LLM answers: the first only.")

    def handle(self, *args, eval_file: Path, collection: str, unanswerable: Path | None, offtopic: Path | None,
               conversations: list[Path], evidence_target: float, limit: int | None, report: Path, show: bool,
               scorers: list[str], **options) -> None:
        collections = Collection.objects.filter(slug=collection)
        if not collections.exists():
            raise CommandError(f"No collection {collection!r}; ingest the corpus first.")
        try:
            items = load_items(eval_file)[:limit]
            near = load_unanswerable(unanswerable)[:limit] if unanswerable else []
            off = load_offtopic(offtopic)[:limit] if offtopic else []
            convs = [c for path in conversations for c in load_conversations(path)[:limit]]
        except EvalFormatError as exc:
            raise CommandError(str(exc)) from exc
        stored = StoredCorpus(Document.objects.filter(collection__in=collections).only("source", "text", "pages"))
        problems = set_problems(stored, items=items, unanswerable=near, conversations=convs)
        if problems:
            raise CommandError(f"The set does not fit the stored collection {collection!r} "
                               f"({len(problems)} problem(s)):\n" + "\n".join(problems))
        answering = llm.current()
        mode = (f"LLM {answering.model} at {answering.base_url}" if answering.configured
                else "no LLM (extractive)")
        self.stdout.write(f"Answering {len(items)} questions, {len(near)} near-topic unanswerable, {len(off)} "
                          f"off-topic, {len(convs)} conversations; {mode}.")
        runs = {}
        scorers = scorers or [reading.current()]
        for scorer in scorers[:1] if answering.configured else scorers:
            self.stdout.write(f"\n== quotes chosen by the {scorer} ==")
            started = time.perf_counter()
            with reading.using(scorer):
                rows = [self._show(run_item(item, collections), show) for item in items]
                rows += [self._show(run_unanswerable(item, collections), show) for item in near]
                rows += [self._show(run_offtopic(item, collections), show) for item in off]
                for conversation in convs:
                    rows += [self._show(row, show) for row in run_conversation(conversation, collections)]
            groups = {kind: [r for r in rows if r["kind"] == kind] for kind in dict.fromkeys(r["kind"] for r in rows)}
            summaries = {kind: summarise(group) for kind, group in groups.items()}
            answerable = [r for r in rows if r["kind"] in KINDS]
            if answerable:
                summaries["answerable"] = summarise(answerable)
            targets = check_targets(summaries, rows, evidence_target=evidence_target)
            self._print(summaries, targets, time.perf_counter() - started)
            runs[scorer] = {"summaries": summaries, "targets": targets, "rows": rows}
        if len(runs) > 1:
            self._compare(runs)
        report.mkdir(parents=True, exist_ok=True)
        first = runs[scorers[0]]
        (report / "report.json").write_text(json.dumps(
            {"mode": mode, "scorer": scorers[0],
             # The first scorer's figures at the top (what the app answers with by default), every scorer's in runs.
             "summaries": first["summaries"], "rows": first["rows"],
             "targets": [{"name": t.name, "value": t.value, "op": t.op, "target": t.target, "passed": t.passed}
                         for t in first["targets"]],
             "runs": {scorer: {
                "summaries": run["summaries"],
                "targets": [{"name": t.name, "value": t.value, "op": t.op, "target": t.target, "passed": t.passed}
                            for t in run["targets"]],
                "rows": run["rows"]} for scorer, run in runs.items()}}, indent=1, default=str), encoding="utf-8")
        self.stdout.write(f"Report: {report / 'report.json'}")

    def _compare(self, runs: dict) -> None:
        """One line per target, each scorer's figure side by side."""
        names = list(runs)
        self.stdout.write("\nSide by side (" + " | ".join(names) + "):")
        by_name = {name: {t.name: t for t in run["targets"]} for name, run in runs.items()}
        for target_name in dict.fromkeys(t.name for run in runs.values() for t in run["targets"]):
            cells = []
            for name in names:
                t = by_name[name].get(target_name)
                cells.append("-" if t is None else f"{t.value:.2f} {'PASS' if t.passed else 'FAIL'}")
            target = next(by_name[n][target_name] for n in names if target_name in by_name[n])
            self.stdout.write(f"  {target_name} ({target.op} {target.target:.2f}): " + " | ".join(cells))

    def _show(self, row: dict, show: bool) -> dict:
        if show:
            state = "ABSTAINED" if row["abstained"] else ("FAILED" if row.get("failed") else "")
            score = "" if row.get("evidence") is None else f" evidence {row['evidence']:.2f}"
            self.stdout.write(f"--- {row['id']} [{row['kind']}] {row['question']}{score} {state}\n"
                              f"{row['text'] or row.get('error', '')}\n")
        return row

    def _print(self, summaries: dict, targets: list, seconds: float) -> None:
        def figure(s: dict, key: str, spec: str = ".2f") -> str:
            return format(s[key], spec) if key in s else "-"

        self.stdout.write("")
        self.stdout.write(ROW_FORMAT.format("kind", "n", "evidence", "baseline", "right doc", "page", "in sources",
                                            "chars", "cites", "valid [n]", "abstained"))
        for kind, s in summaries.items():
            self.stdout.write(ROW_FORMAT.format(
                kind, s["n"], figure(s, "evidence"), figure(s, "baseline_evidence"), figure(s, "right_document"),
                figure(s, "page_right"), figure(s, "source_in_sources"), figure(s, "chars", ".0f"),
                figure(s, "cites"), figure(s, "valid_citations"), figure(s, "abstained")))
        self.stdout.write("")
        self.stdout.write("evidence: share of the evidence phrases in the answer text (an abstention counts 0); "
                          "baseline: the same in the first 550 characters of the best-ranked chunk; right doc: "
                          "the source is among the cited sources; page: the cited page is the evidence's (PDF); "
                          "in sources: among the numbered sources the answer was given; chars: mean answer length "
                          "(answers given); cites: answers citing at least one source; valid [n]: answers whose "
                          "every [n] exists (after the grounding pass; before it: "
                          + ", ".join(f"{k} {s['raw_valid_citations']:.2f}" for k, s in summaries.items()
                                      if s["answered"]) + "); abstained: answered \"not found\".")
        if targets:
            self.stdout.write("")
            self.stdout.write("Targets:")
            for target in targets:
                self.stdout.write(target.line())
        self.stdout.write(f"{seconds:.0f} s.")
