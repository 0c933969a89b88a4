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
        names |= set(ENV_HELPER.findall(text))
        names |= {a or b for a, b in ENVIRON_READ.findall(text)}
    return names - REFUSED - NOT_OURS


def variables_documented(page: Path = ROOT / "docs" / "configuration.md") -> set[str]:
    """The backticked names in the first column of the page's tables (prose, such as "Changes", is not read)."""
    names: set[str] = set()
    for line in page.read_text().splitlines():
        if line.startswith("| `"):
            first_cell = line.split("|")[1]
            names |= set(re.findall(r"`([A-Z][A-Z0-9_]*)`", first_cell))
    return names


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


def test_the_operator_settings_stay_few():
    development = {"CELERY_TASK_ALWAYS_EAGER", "RAGWEB_REDIS_DB", "RAGWEB_WARM_UP", "TEST_DATABASE_NAME"}
    assert development <= variables_documented()
    assert len(variables_documented() - development) <= 70
