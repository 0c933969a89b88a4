"""`make test` leaves out the tests marked slow, `make test-slow` runs exactly those, and CI runs both."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def recipe(target: str) -> str:
    """What `make -n TARGET` would run for the target itself (its prerequisites' commands left out)."""
    out = subprocess.run(["make", "-n", target, "PY=PY", "PYTEST_ARGS="], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [line for line in out.splitlines() if line.startswith("PY -m pytest")][0]


def test_make_test_leaves_out_the_slow_tests_and_test_slow_runs_them():
    assert recipe("test") == 'PY -m pytest -m "not slow" -n 2 --dist loadfile '
    assert recipe("test-slow") == "PY -m pytest -m slow "


def test_ci_runs_the_lint_the_tests_and_the_slow_tests():
    commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("make ")]
    assert commands == ["make lint", "make test", "make test-slow"]


def fake_venv(tmp_path: Path) -> tuple[Path, Path]:
    """A virtualenv whose python only writes down its arguments: what make would install, with nothing installed."""
    venv, calls = tmp_path / "venv", tmp_path / "calls"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    python.chmod(0o755)
    calls.touch()
    return venv, calls


def make(venv: Path, *args: str) -> str:
    # Not the make that runs the tests (`make test` in CI): its MAKEFLAGS/MAKELEVEL would make this
    # one print "Entering directory" lines among the commands.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.run(["make", f"VENV={venv}", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True, env=env).stdout


RUNTIME = "-m pip install --quiet --no-compile --no-deps -r requirements.txt"
DEVELOPMENT = "-m pip install --quiet --no-compile --no-deps -r requirements-dev.txt"


def test_make_run_installs_the_runtime_requirements_and_the_other_targets_the_development_ones_once(tmp_path):
    venv, calls = fake_venv(tmp_path)
    make(venv, "install")
    make(venv, "install")  # installed already: nothing to do
    assert calls.read_text().splitlines() == [RUNTIME]

    make(venv, "install-dev")
    make(venv, "install", "install-dev")
    assert calls.read_text().splitlines() == [RUNTIME, DEVELOPMENT]
    assert sorted(p.name.rsplit("-", 1)[0] for p in venv.glob(".installed-*")) == [".installed-dev", ".installed-run"]


def test_an_edited_requirements_file_installs_again(tmp_path):
    venv, calls = fake_venv(tmp_path)
    make(venv, "install-dev")
    for stamp in venv.glob(".installed-*"):  # as if made for other contents of the files
        stamp.rename(stamp.with_name(stamp.name[:-12] + "0" * 12))
    make(venv, "install")
    make(venv, "install-dev")
    assert calls.read_text().splitlines() == [DEVELOPMENT, RUNTIME, DEVELOPMENT]
    assert len(list(venv.glob(".installed-*"))) == 2  # the stale stamps gone


def test_which_targets_install_what(tmp_path):
    venv, _ = fake_venv(tmp_path)
    for target in ("run", "services-start", "migrate"):
        planned = make(venv, "-n", target)
        assert RUNTIME in planned and "requirements-dev.txt" not in planned, target
    for target in ("test", "test-slow", "lint", "reliability", "eval", "bench-embed", "train-reader"):
        assert DEVELOPMENT in make(venv, "-n", target), target


def test_a_new_virtualenv_gets_a_current_pip_without_byte_compiling_it(tmp_path):
    planned = make(tmp_path / "new-venv", "-n", "install", "PYTHON=python3.11").splitlines()
    assert planned[:2] == [f"python3.11 -m venv {tmp_path / 'new-venv'}",
                           f"{tmp_path / 'new-venv'}/bin/python -m pip install --quiet --no-compile --upgrade pip"]


def test_the_development_requirements_hold_every_dependency_of_theirs():
    # `make` installs with --no-deps: a package that needs one pinned nowhere would be missing.
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    def pins(path: Path) -> set[str]:
        return {canonicalize_name(line.split("==")[0]) for line in path.read_text().splitlines()
                if line and not line.startswith(("#", "-r "))}

    pinned = pins(ROOT / "requirements.txt") | pins(ROOT / "requirements-dev.txt")
    missing = set()
    for name in pins(ROOT / "requirements-dev.txt"):
        for text in metadata.distribution(name).requires or []:
            requirement = Requirement(text)
            if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
                continue
            if canonicalize_name(requirement.name) not in pinned | {"setuptools"}:
                missing.add(f"{name} needs {requirement.name}")
    assert not missing


def test_run_and_the_benchmarks_have_their_defaults(tmp_path, monkeypatch):
    # PORT and EVAL_DIR lost their defaults once: `make run` then served on PORT="" and the evaluations and
    # benchmarks read /django-docs. The benchmark at scale answers nothing: no sentence vectors for its corpus.
    monkeypatch.delenv("PORT", raising=False)  # as from a shell that sets neither
    monkeypatch.delenv("EVAL_DIR", raising=False)
    venv, _ = fake_venv(tmp_path)
    assert f"PORT=8000 {venv}/bin/python scripts/run.py" in make(venv, "-n", "run").splitlines()
    assert ("CELERY_TASK_ALWAYS_EAGER=1 ANSWER_VECTORS_AT_INGESTION=0 "
            f"{venv}/bin/python manage.py ingest ../shared/eval/django-docs --collection django-docs --wait --quiet"
            in make(venv, "-n", "bench-scale").splitlines())
    assert (f"{venv}/bin/python manage.py evaluate ../shared/eval/django_dev.jsonl --collection django-docs "
            "--docs ../shared/eval/django-docs" in make(venv, "-n", "eval").splitlines())
