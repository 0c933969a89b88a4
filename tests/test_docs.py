"""docs/: figures live once (docs/measurements.md only points to them) and its links reach real sections."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    in_code, found = False, set()
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            found.add(github_anchor(line.lstrip("#")))
    return found


def test_github_anchor_matches_githubs_rule():
    heading = " Held-out check: the installed packages' READMEs"
    assert github_anchor(heading) == "held-out-check-the-installed-packages-readmes"
    assert github_anchor("The reader (issue 38, 2026-12-06)") == "the-reader-issue-38-2026-12-06"


def test_measurements_holds_no_figure_of_its_own():
    text = (DOCS / "measurements.md").read_text()
    # Decimal figures (0.935, 17.3 ms) belong on the page that measured them; "~109,000 chunks" names a section.
    assert re.findall(r"\b\d+\.\d+\b", text) == []


def test_every_link_of_measurements_reaches_a_section():
    links = re.findall(r"\]\(([a-z-]+\.md)(?:#([^)]+))?\)", (DOCS / "measurements.md").read_text())
    assert len(links) >= 20
    for page, anchor in links:
        assert (DOCS / page).exists(), page
        if anchor:
            assert anchor in anchors(DOCS / page), f"{page}#{anchor}"
