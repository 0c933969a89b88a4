"""`make reliability`'s web section: the SSRF attempts, the redirect loop and the endless answer in `make test`
(under a second each); the slow drip, which waits out a 3 s fetch timeout and its server (~6 s), in
`make test-slow`. The sitemap
bombs at full size run only in the harness; tests/sources/web/test_site.py checks each bomb's limit at small
sizes, tests/sources/web/test_fetch.py the byte and time limits at small ones."""

from __future__ import annotations

import pytest

from reliability import websources


@pytest.mark.parametrize("check", [
    websources.ssrf_attempts, websources.redirect_loop, websources.huge_response,
    pytest.param(websources.slow_drip, marks=pytest.mark.slow),
], ids=lambda c: c.__name__)
def test_the_web_sources_check_passes(check):
    scenario, ok, detail = check()
    assert ok, f"{scenario}: {detail}"
