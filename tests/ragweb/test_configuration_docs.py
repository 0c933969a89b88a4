"""docs/configuration.md lists exactly the environment variables ragweb reads: a setting added without a row,
or a row left behind by a setting that became a constant, fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Read only to refuse it with a message (docs/configuration.md, "Changes"): not a setting.
REFUSED = {"CELERY_BROKER_URL"}
# Other programs' variables that ragweb passes on or sets for them: Django's, glibc's.
NOT_OURS = {"DJANGO_SETTINGS_MODULE", "MALLOC_ARENA_MAX"}
# The app's code, without the tests, the reliability harness and the evaluation/benchmark commands,
# which read variables of their own for the runs they start.
SKIPPED = ("tests/", "reliability/", "chat/evaluation/", ".venv/", "var/")
# Retired variables that migrations still read, to carry an old deployment's value into the database
# once (corpus 0014, 0024, 0026: the chunk column's model): read by nothing else.
CARRIED_BY_MIGRATIONS = {"EMBEDDING_COLUMN_MODEL"}

ENV_HELPER = re.compile(r"\b(?:env_\w+|_throttle_rate)\(\s*\"([A-Z][A-Z0-9_]*)\"")
ENVIRON_READ = re.compile(r"os\.environ(?:\.get\(|\[|\.pop\()\s*\"([A-Z][A-Z0-9_]*)\""
                          r"|\"([A-Z][A-Z0-9_]*)\" (?:not )?in os\.environ")


def variables_read(root: Path = ROOT) -> set[str]:
    names: set[str] = set()
    for path in root.rglob("*.py"):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(SKIPPED):
            continue
        text = path.read_text()
        found = set(ENV_HELPER.findall(text)) | {a or b for a, b in ENVIRON_READ.findall(text)}
        names |= found - CARRIED_BY_MIGRATIONS if "/migrations/" in relative else found
    return names - REFUSED - NOT_OURS


def variables_by_section(page: Path = ROOT / "docs" / "configuration.md") -> dict[str, set[str]]:
    """{section title: the backticked names in the first column of its table} (prose, such as "Changes",
    is not read)."""
    sections: dict[str, set[str]] = {}
    section = ""
    for line in page.read_text().splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("| `"):
            first_cell = line.split("|")[1]
            sections.setdefault(section, set()).update(re.findall(r"`([A-Z][A-Z0-9_]*)`", first_cell))
    return sections


def variables_documented(page: Path = ROOT / "docs" / "configuration.md") -> set[str]:
    return set().union(*variables_by_section(page).values())


def test_the_scanner_finds_each_way_of_reading(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "conf.py").write_text(
        'A = env_int("ONE", 1)\nB = env_str(\n    "TWO", "")\nC = os.environ.get("THREE")\nD = os.environ["FOUR"]\n'
        'if "FIVE" not in os.environ: pass\nos.environ.setdefault("NOT_A_READ", "1")\n')
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text('os.environ.get("IN_A_TEST")\n')
    assert variables_read(tmp_path) == {"ONE", "TWO", "THREE", "FOUR", "FIVE"}


def test_the_configuration_page_lists_exactly_the_variables_read():
    read, documented = variables_read(), variables_documented()
    assert sorted(read - documented) == [], "read but not in docs/configuration.md's tables"
    assert sorted(documented - read) == [], "in docs/configuration.md's tables but not read"


OPERATOR_GROUPS = ["Server", "Storage", "Models", "LLM", "Sources", "Security", "Single sign-on", "Limits"]


def test_the_operator_settings_stay_few():
    sections = variables_by_section()
    assert list(sections) == [*OPERATOR_GROUPS, "Development"]
    operator = set().union(*(sections[group] for group in OPERATOR_GROUPS))
    # 67 before issue 41's second round, 39 after it, 36 after the third, 32 after the fourth; the issue aims at
    # about thirty.
    assert len(operator) <= 32, sorted(operator)
    # Development variables: for tests, benchmarks and the harness; a short list, no operator setting among them.
    assert len(sections["Development"]) <= 13 and not sections["Development"] & operator


def test_a_retired_variable_is_neither_read_nor_documented():
    from lib.retired_settings import RETIRED

    assert not set(RETIRED) & variables_read()
    assert not set(RETIRED) & variables_documented()
