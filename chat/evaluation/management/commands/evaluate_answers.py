"""`manage.py evaluate_answers EVAL.jsonl --collection SLUG [--offtopic FILE] [--conversations FILE]`

Runs the real answer pipeline (as the chat page does: rewrite, search, "not found" check, LLM or
extractive answer, grounding pass) over an evaluation set and prints, per question kind: evidence
in the answer text, mean answer length, the right document among the cited sources, citation
validity, and the abstention rate (off-topic questions should abstain, answerable ones should
not). With LLM_BASE_URL set the answers come from that LLM. See chat/evaluation/answers.py.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from chat.evaluation.answers import (
    load_conversations,
    load_offtopic,
    run_conversation,
    run_item,
    run_offtopic,
    summarise,
)
from chat.evaluation.metrics import KINDS, EvalFormatError, load_items
from corpus.models import Collection

ROW_FORMAT = "{:<22} {:>4} {:>9} {:>9} {:>10} {:>7} {:>6} {:>9} {:>10}"


class Command(BaseCommand):
    help = "Evaluate the answers (not just retrieval): evidence in the answer, citations, abstention."

    def add_arguments(self, parser) -> None:
        parser.add_argument("eval_file", type=Path, help="JSONL questions (the ../shared/eval format).")
        parser.add_argument("--collection", required=True, help="Slug of the collection holding the corpus.")
        parser.add_argument("--offtopic", type=Path, help="JSONL off-topic questions that should be declined.")
        parser.add_argument("--conversations", type=Path, help="JSONL two-turn conversations (follow-ups).")
        parser.add_argument("--limit", type=int, help="Only the first N questions of each file.")
        parser.add_argument("--report", type=Path, default=Path("var/eval-answers"),
                            help="Folder for report.json (every answer with its scores).")
        parser.add_argument("--show", action="store_true", help="Print each answer as it comes.")

    def handle(self, *args, eval_file: Path, collection: str, offtopic: Path | None, conversations: Path | None,
               limit: int | None, report: Path, show: bool, **options) -> None:
        collections = Collection.objects.filter(slug=collection)
        if not collections.exists():
            raise CommandError(f"No collection {collection!r}; ingest the corpus first.")
        try:
            items = load_items(eval_file)[:limit]
            off = load_offtopic(offtopic)[:limit] if offtopic else []
            convs = load_conversations(conversations)[:limit] if conversations else []
        except EvalFormatError as exc:
            raise CommandError(str(exc)) from exc
        mode = (f"LLM {settings.LLM_MODEL} at {settings.LLM_BASE_URL}" if settings.LLM_BASE_URL
                else "no LLM (extractive)")
        self.stdout.write(f"Answering {len(items)} questions, {len(off)} off-topic, {len(convs)} conversations; "
                          f"{mode}.")
        started = time.perf_counter()
        rows = [self._show(run_item(item, collections), show) for item in items]
        rows += [self._show(run_offtopic(item, collections), show) for item in off]
        follow = [self._show(run_conversation(c, collections), show) for c in convs]
        alone = [{**run_conversation(c, collections, use_history=False), "kind": f"{c.kind} (alone)"}
                 for c in convs]
        rows += follow + alone
        groups = {kind: [r for r in rows if r["kind"] == kind] for kind in dict.fromkeys(r["kind"] for r in rows)}
        summaries = {kind: summarise(group) for kind, group in groups.items()}
        answerable = [r for r in rows if r["kind"] in KINDS]
        if answerable:
            summaries["answerable"] = summarise(answerable)
        self._print(summaries, time.perf_counter() - started)
        report.mkdir(parents=True, exist_ok=True)
        (report / "report.json").write_text(json.dumps(
            {"mode": mode, "summaries": summaries, "rows": rows}, indent=1, default=str), encoding="utf-8")
        self.stdout.write(f"Report: {report / 'report.json'}")

    def _show(self, row: dict, show: bool) -> dict:
        if show:
            state = "ABSTAINED" if row["abstained"] else ("FAILED" if row.get("failed") else "")
            score = "" if row.get("evidence") is None else f" evidence {row['evidence']:.2f}"
            self.stdout.write(f"--- {row['id']} [{row['kind']}] {row['question']}{score} {state}\n"
                              f"{row['text'] or row.get('error', '')}\n")
        return row

    def _print(self, summaries: dict, seconds: float) -> None:
        self.stdout.write("")
        self.stdout.write(ROW_FORMAT.format("kind", "n", "evidence", "right doc", "in sources", "chars", "cites",
                                            "valid [n]", "abstained"))
        for kind, s in summaries.items():
            evidence = f"{s['evidence']:.2f}" if "evidence" in s else "-"
            right = f"{s['right_document']:.2f}" if "right_document" in s else "-"
            found = f"{s['source_in_sources']:.2f}" if "source_in_sources" in s else "-"
            self.stdout.write(ROW_FORMAT.format(kind, s["n"], evidence, right, found, f"{s['chars']:.0f}",
                                                f"{s['cites']:.2f}", f"{s['valid_citations']:.2f}",
                                                f"{s['abstained']:.2f}"))
        self.stdout.write("")
        self.stdout.write("evidence: share of the evidence phrases in the answer text (an abstention counts 0); "
                          "right doc: the source is among the cited sources; in sources: among the numbered "
                          "sources the answer was given; chars: mean answer length (answers given); "
                          "cites: answers citing at least one source; valid [n]: answers whose every [n] exists "
                          "(after the grounding pass; before it: "
                          + ", ".join(f"{k} {s['raw_valid_citations']:.2f}" for k, s in summaries.items()
                                      if s["answered"]) + ").")
        parts = []
        if "offtopic" in summaries:
            parts.append(f"off-topic abstained {summaries['offtopic']['abstained']:.2f} (target >= 0.90)")
        if "answerable" in summaries:
            parts.append(f"answerable abstained {summaries['answerable']['abstained']:.2f} (target <= 0.05)")
        if parts:
            self.stdout.write("Abstention: " + "; ".join(parts) + ".")
        self.stdout.write(f"{seconds:.0f} s.")
