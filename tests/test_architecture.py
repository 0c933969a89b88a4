"""The layering is a contract a tool checks: the import-linter layers contract in pyproject.toml, which
must name every top-level package, plus two rules import-linter cannot state for packages that grow: no
import cycle anywhere (imports inside functions included), and no production module reaching the
evaluation package."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
IMPORTLINTER = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
PACKAGES = tuple(IMPORTLINTER["root_packages"])
EVALUATION = "chat.evaluation"
HARNESS = "reliability"  # make reliability's harness: a tool, like the evaluation


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def strongly_connected(nodes, edges) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the groups of modules that import each other in a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def top_level_packages() -> set[str]:
    """The checkout's Python packages: folders at the root with an __init__.py (tests/ aside)."""
    return {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}


def test_the_layers_contract_names_every_package():
    (layers,) = [c for c in IMPORTLINTER["contracts"] if c["id"] == "layers"]
    named = [name.strip() for layer in layers["layers"] for name in re.split(r"[|:]", layer)]
    assert sorted(named) == sorted(PACKAGES) == sorted(top_level_packages())


def test_the_readmes_layout_lists_every_package_and_only_folders_that_exist():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Layout", 1)[1].split("```")[1]
    # An unindented line names top-level folders ("templates/, static/"), then two spaces and what they hold.
    listed = {name.strip().strip("/") for line in block.splitlines() if line and not line.startswith(" ")
              for name in re.split(r"\s{2,}", line)[0].split(",")}
    assert top_level_packages() <= listed
    assert [name for name in sorted(listed) if not (ROOT / name).is_dir()] == []


def test_strongly_connected_finds_a_cycle_and_only_it():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(["a", "b", "c", "d"], edges) == [["a", "b", "c"]]


def test_it_has_no_import_cycle(graph):
    modules = sorted(graph.modules)
    edges = {m: graph.find_modules_directly_imported_by(m) & graph.modules for m in modules}
    assert strongly_connected(modules, edges) == []


def test_production_never_imports_evaluation(graph):
    production = sorted(m for m in graph.modules if not any(m == tool or m.startswith(tool + ".")
                                                            for tool in (EVALUATION, HARNESS)))
    offenders = [m for m in production
                 if any(i == EVALUATION or i.startswith(EVALUATION + ".")
                        for i in graph.find_upstream_modules(m))]
    assert offenders == []


def test_import_linter_contracts_are_kept():
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "BROKEN" not in result.stdout
