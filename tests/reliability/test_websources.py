"""The quick rows of `make reliability`'s web section, in `make test` (the sitemap bombs at full size run
only in the harness; tests/sources/web/test_site.py checks each bomb's limit at small sizes)."""

from __future__ import annotations

import pytest

from reliability import websources


@pytest.mark.parametrize("check", [websources.ssrf_attempts, websources.redirect_loop, websources.huge_response,
                                   websources.slow_drip], ids=lambda c: c.__name__)
def test_the_web_sources_check_passes(check):
    scenario, ok, detail = check()
    assert ok, f"{scenario}: {detail}"
