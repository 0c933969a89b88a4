"""Every CSS custom property the stylesheets use is one that is defined: the app's own (static/ragweb/
app.css, light and dark) for the app's pages, Django admin's for the admin's stylesheet. An undefined
`var(--x)` silently falls back (or draws nothing), which no other test would notice."""

from __future__ import annotations

import re
from pathlib import Path

import django.contrib.admin
import pytest

STATIC = Path(__file__).resolve().parent.parent / "static"
ADMIN_CSS = Path(django.contrib.admin.__file__).parent / "static" / "admin" / "css"
_USED = re.compile(r"var\(\s*(--[\w-]+)")
_DEFINED = re.compile(r"(?:^|[;{\s])(--[\w-]+)\s*:")


def defined_in(*paths: Path) -> set[str]:
    return {name for path in paths for name in _DEFINED.findall(path.read_text())}


def used_in(path: Path) -> set[str]:
    return set(_USED.findall(path.read_text()))


APP = defined_in(STATIC / "ragweb" / "app.css")
ADMIN = defined_in(*ADMIN_CSS.glob("*.css"))


@pytest.mark.parametrize("path", sorted(p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*.css")
                                        if "vendor" not in p.parts))
def test_it_uses_only_defined_custom_properties(path):
    defined = APP | (ADMIN if path.endswith("admin.css") else set())
    assert used_in(STATIC / path) - defined == set()


def test_it_finds_what_it_checks():
    assert {"--line", "--muted", "--radius"} <= APP and "--hairline-color" in ADMIN
    assert "--line" in used_in(STATIC / "sources" / "sources.css")
