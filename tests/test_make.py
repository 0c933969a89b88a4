"""`make test` leaves out the tests marked slow, `make test-slow` runs exactly those, and CI runs both."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def recipe(target: str) -> str:
    """What `make -n TARGET` would run for the target itself (its prerequisites' commands left out)."""
    out = subprocess.run(["make", "-n", target, "PY=PY"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [line for line in out.splitlines() if line.startswith("PY -m pytest")][0]


def test_make_test_leaves_out_the_slow_tests_and_test_slow_runs_them():
    assert recipe("test") == 'PY -m pytest -m "not slow" '
    assert recipe("test-slow") == "PY -m pytest -m slow "


def test_ci_runs_the_lint_the_tests_and_the_slow_tests():
    commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("make ")]
    assert commands == ["make lint", "make test", "make test-slow"]
