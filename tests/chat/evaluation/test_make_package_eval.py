import email.message
import json
from io import StringIO

from django.core.management import call_command

from chat.evaluation.management.commands.make_package_eval import package_documents
from chat.evaluation.metrics import load_items


class FakeDistribution:
    def __init__(self, name, summary, body, content_type="text/markdown"):
        self.metadata = email.message.Message()
        self.metadata["Name"] = name
        if summary is not None:
            self.metadata["Summary"] = summary
        self.metadata["Description-Content-Type"] = content_type
        self.metadata.set_payload(body)


def test_keeps_packages_with_a_summary_and_a_long_description_without_the_summary_text():
    long = "Usage notes. " * 30
    dists = [
        FakeDistribution("Zeta_Tool", "A tool for zeta functions in pure Python",
                         "# Zeta\n\na tool for ZETA functions in pure python.\n\n" + long),
        FakeDistribution("alpha", "Alpha makes alpha channels easy to edit", long, content_type="text/x-rst"),
        FakeDistribution("short", "A package whose description is too short", "Tiny."),
        FakeDistribution("nosummary", None, long),
        FakeDistribution("unknown", "UNKNOWN", long),
        FakeDistribution("alpha", "A second alpha, shadowed by the first one", long),
    ]
    docs = package_documents(dists, min_chars=200)
    assert [(name, summary) for name, _, summary in docs] == [
        ("alpha.txt", "Alpha makes alpha channels easy to edit"),
        ("zeta-tool.md", "A tool for zeta functions in pure Python"),
    ]
    zeta_body = docs[1][1]
    assert "zeta functions" not in zeta_body.lower() and zeta_body.startswith("# Zeta")


def test_writes_a_set_that_evaluate_reads(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "left-over.md").write_text("from an earlier run")
    out, err = StringIO(), StringIO()
    call_command("make_package_eval", str(tmp_path), "--min-chars", "2000", stdout=out, stderr=err)
    assert "1 other files" in err.getvalue() and "left-over.md" in err.getvalue()
    items = load_items(tmp_path / "questions.jsonl")
    assert len(items) >= 10  # Django, DRF, Celery, torch... all describe themselves at length
    assert f"{len(items)} packages" in out.getvalue()
    assert len({i.source for i in items}) == len(items)
    for item in items:
        body = (tmp_path / "docs" / item.source).read_text(encoding="utf-8")
        assert len(body.strip()) >= 2000 and item.question.lower() not in body.lower()
        assert item.kind == "factoid" and item.evidence == ()
    first = json.loads((tmp_path / "questions.jsonl").read_text().splitlines()[0])
    assert first["id"] == "pkg-001"
