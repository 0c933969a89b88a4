from __future__ import annotations

import pytest

from tests.sso import provider as idp


@pytest.fixture
def oidc_provider(tmp_path):
    """A real OpenID provider with ragweb, as Django's test client calls it (http://testserver), as
    its client; ragweb's settings point at it."""
    handle = idp.start(tmp_path, app_base_url="http://testserver")
    try:
        yield handle
    finally:
        idp.stop(handle)
