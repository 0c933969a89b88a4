"""`manage.py evaluate_grounding [--rebuild] [--eval-dir ../shared/eval]`

The grounding pass's ways of checking a claim against its cited source, side by side on the
labelled grounding set (chat.evaluation.grounding_set, data/grounding/): today's word overlap, the
reader alone, and the two combined (chat.evaluation.grounding_eval). Thresholds are chosen on the
development set and applied to the held-out sets. --rebuild makes the set again from the answer
sets first (the development set's documents under --eval-dir).
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.evaluation import grounding_eval, grounding_set


class Command(BaseCommand):
    help = "Measure the grounding pass's claim checks (word overlap, the reader) on the labelled grounding set."

    def add_arguments(self, parser):
        parser.add_argument("--rebuild", action="store_true", help="make data/grounding/*.jsonl again first")
        parser.add_argument("--eval-dir", type=Path, default=grounding_set.EVAL_DIR,
                            help="the development set's folder (django_dev.jsonl, django-docs/)")

    def handle(self, *args, rebuild: bool, eval_dir: Path, **options):
        from reader import runtime

        if rebuild:
            if not (eval_dir / "django_dev.jsonl").exists():
                raise CommandError(f"no development set in {eval_dir} (--eval-dir)")
            for name, count in grounding_set.build(eval_dir).items():
                self.stdout.write(f"{name}: {count} claims")
        if not runtime.available():
            raise CommandError("the reader's model is not in reader/model/")
        scored = {name: grounding_eval.score(grounding_set.load(name))
                  for name in grounding_set.SETS}
        self.stdout.write(f"reader reads the best {grounding_eval.READ} sentences of the cited source per claim")
        for line in grounding_eval.table(scored):
            self.stdout.write(line)
