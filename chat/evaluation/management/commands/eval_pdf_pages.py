"""`manage.py eval_pdf_pages PDF... [--collection SLUG] [--per-document N]`

Whether an answer's citations name the PDF page of the sentence they are cited for. The PDFs are
ingested (in-process) into the collection (default `pdf-pages-eval`, created with the default
settings); each document gets up to N questions, one per heading set apart in its text spread
over its pages ("What does the --verbose option of grep do?" for a manual page's option, "What
does the manual say about Library Notes?" otherwise), answered by the real pipeline (extractive
unless LLM_BASE_URL is set). For every citation of every answer, the page of the sentence cited
(the first answer sentence citing it, found in the document's text) is compared with the page
the citation names, with the page its segment starts on (what citations named before) and with
the page the passage view names. With --questions (the held-out JSONL format: question, source,
evidence, page), those questions are asked instead, and the citations quoting an evidence
phrase are also checked against the evidence's page.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.answering.grounding import sentences_citing
from chat.answering.pipeline import AnswerError, answer_question
from chat.evaluation.metrics import normalise
from chat.passages import highlight_for
from corpus import services
from corpus.ingest.parse.base import page_number
from corpus.models import Collection, Document

_HEADING = re.compile(r"(?:^|(?<=\n\n))([^\n]{3,60})(?=\n\n\S)")
_OPTION = re.compile(r"^(--?[A-Za-z][\w-]*)")
_NUMBERING = re.compile(r"^[\d.]+\s+")


def questions_for(document: Document, limit: int) -> list[str]:
    """Up to `limit` questions about the headings of `document`, spread over the document."""
    name = Path(document.source).stem
    headings = [m.group(1).strip() for m in _HEADING.finditer(document.text)]
    asked = []
    for heading in headings:
        option = _OPTION.match(heading)
        if option:
            asked.append(f"What does the {option.group(1)} option of {name} do?")
        elif len(heading.split()) >= 2 and heading[0].isupper() or _NUMBERING.match(heading):
            asked.append(f"What does the {name} manual say about {_NUMBERING.sub('', heading)}?")
    asked = list(dict.fromkeys(asked))
    step = max(1, len(asked) // limit) if limit else 1
    return asked[::step][:limit]


def cited_offset(text: str, claim: str, start: int, end: int) -> int | None:
    """Where the answer sentence `claim` (a quote, its white space and cut changed) is in text[start:end]."""
    words = claim.replace("…", " ").split()[:12]
    if len(words) < 3:
        return None
    pattern = re.compile(r"\s+".join(re.escape(w).replace("\\`", "`?") for w in words))
    match = pattern.search(text, start, end) or pattern.search(text)
    return match.start() if match else None


class Command(BaseCommand):
    help = "Measure whether citations name the PDF page of the cited sentence."

    def add_arguments(self, parser) -> None:
        parser.add_argument("pdfs", nargs="+", type=Path)
        parser.add_argument("--collection", default="pdf-pages-eval")
        parser.add_argument("--per-document", type=int, default=10)
        parser.add_argument("--questions", type=Path, help="JSONL questions (question, source, evidence, page) "
                            "asked instead of questions made from the headings.")
        parser.add_argument("--show-misses", action="store_true", help="Print each citation whose page is wrong.")

    def handle(self, *args, pdfs: list[Path], collection: str, per_document: int, questions: Path | None,
               show_misses: bool, **options) -> None:
        self.show_misses = show_misses
        items = [json.loads(line) for line in questions.read_text().splitlines() if line.strip()] if questions else []
        target, _ = Collection.objects.get_or_create(slug=collection, defaults={"name": collection})
        documents = [self._ingest(target, path) for path in pdfs]
        totals = dict.fromkeys(("questions", "citations", "named", "segment", "passage", "unlocated", "evidence",
                                "evidence_named"), 0)
        scope = Collection.objects.filter(pk=target.pk)
        for document in documents:
            asked = ([item for item in items if item.get("source") == document.source] if items
                     else [{"question": q} for q in questions_for(document, per_document)])
            row = dict.fromkeys(totals, 0)
            for item in asked:
                row["questions"] += 1
                try:
                    _, answer = answer_question(question=item["question"], collections=scope)
                except AnswerError:
                    continue
                for citation in answer.citations:
                    self._check(item, answer.text, citation, row)
            self._row(document.source, row)
            for key in totals:
                totals[key] += row[key]
        self._row("all", totals)

    def _ingest(self, target: Collection, path: Path) -> Document:
        from celery import current_app as app  # the project's (ragweb.celery): apps sit below the shell

        app.conf.task_always_eager = True  # ingest in this process: no worker needed
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        document = services.document_ingest(collection=target, source=path.name, data=path.read_bytes(),
                                             filename=path.name)
        document.refresh_from_db()
        if document.status != Document.Status.READY:
            raise CommandError(f"{path}: {document.status} {document.error}")
        return document

    def _check(self, item: dict, answer: str, citation: dict, row: dict) -> None:
        cited = Document.objects.get(pk=citation["document"]["id"])
        claims = sentences_citing(answer, citation["n"])
        offset = cited_offset(cited.text, claims[0], citation["char_start"], citation["char_end"]) if claims else None
        if offset is None:
            row["unlocated"] += 1
            return
        truth = page_number(cited.pages, offset)
        row["citations"] += 1
        row["named"] += citation["page"] == truth
        row["segment"] += page_number(cited.pages, citation["char_start"]) == truth
        row["passage"] += cited.page_at(highlight_for(cited, citation, answer).focus) == truth
        if self.show_misses and citation["page"] != truth:
            self.stdout.write(f"  miss: {item['question']!r} [{citation['n']}] names page {citation['page']}, "
                              f"the sentence is on page {truth}: {claims[0][:100]!r}")
        # With a question set: the citation quoting the evidence names the evidence's page.
        if item.get("page") and any(normalise(e) in normalise(claims[0]) for e in item.get("evidence", [])):
            row["evidence"] += 1
            row["evidence_named"] += citation["page"] == item["page"]

    def _row(self, name: str, row: dict) -> None:
        n = row["citations"] or 1
        line = (f"{name:<28} questions {row['questions']:3}  citations {row['citations']:3} "
                f"(not located {row['unlocated']})  page named right {row['named'] / n:.3f}  "
                f"segment start page {row['segment'] / n:.3f}  passage view {row['passage'] / n:.3f}")
        if row["evidence"]:
            line += f"  evidence page {row['evidence_named']}/{row['evidence']}"
        self.stdout.write(line)
