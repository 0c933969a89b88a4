"""The demo corpus that `make run` loads: only its documents are ingested (not the folder's
README), and the settings it names are settings ragweb reads."""

import re
from pathlib import Path

from corpus.management.commands.ingest import iter_files

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "demo" / "docs"


def test_make_run_ingests_the_documents_folder_only():
    run = (ROOT / "scripts" / "run.py").read_text()
    assert 'manage("ingest", "demo/docs", "--collection", "demo"' in run
    files, skipped = iter_files(DOCS)
    assert sorted(source for _path, source in files) == sorted(path.name for path in DOCS.glob("*.md"))
    assert skipped == [] and "README.md" not in [source for _path, source in files]
    assert (ROOT / "demo" / "README.md").is_file()  # describes the folder, beside the documents


def test_the_settings_the_demo_names_exist():
    settings_source = "".join(path.read_text() for path in (ROOT / "ragweb").glob("*.py"))
    named = set()
    for path in DOCS.glob("*.md"):
        named |= set(re.findall(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`", path.read_text()))
    assert {"SEARCH_HNSW_EF", "REDIS_URL", "LLM_BASE_URL"} <= named
    assert [name for name in sorted(named) if f'"{name}"' not in settings_source] == []


def test_the_demo_describes_the_default_fusion():
    text = (DOCS / "03-hybrid-search.md").read_text()
    assert "By default ragweb fuses the two lists with a **convex combination**" in text
    assert "Reciprocal rank fusion (RRF) stays available" in text
    assert "SEARCH_VECTOR_WEIGHT" not in "".join(p.read_text() for p in DOCS.glob("*.md"))
