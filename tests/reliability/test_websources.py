"""`make reliability`'s web section: the SSRF attempts and the redirect loop in `make test`; the endless answer
and the slow drip, which each wait for a limit to be reached (bytes, seconds), in `make test-slow`. The sitemap
bombs at full size run only in the harness; tests/sources/web/test_site.py checks each bomb's limit at small
sizes, tests/sources/web/test_fetch.py the byte and time limits at small ones."""

from __future__ import annotations

import pytest

from reliability import websources


@pytest.mark.parametrize("check", [
    websources.ssrf_attempts, websources.redirect_loop,
    pytest.param(websources.huge_response, marks=pytest.mark.slow),
    pytest.param(websources.slow_drip, marks=pytest.mark.slow),
], ids=lambda c: c.__name__)
def test_the_web_sources_check_passes(check):
    scenario, ok, detail = check()
    assert ok, f"{scenario}: {detail}"
