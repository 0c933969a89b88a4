from __future__ import annotations

import pytest

from tests.sso import provider as idp


@pytest.fixture(scope="session")
def _oidc_provider_holder(tmp_path_factory):
    """The provider process shared by the sign-in tests (node and oidc-provider take seconds to start)."""
    holder = {"handle": None, "dir": tmp_path_factory.mktemp("oidc-provider")}
    yield holder
    if holder["handle"] is not None:
        idp.stop(holder["handle"])


@pytest.fixture
def oidc_provider(_oidc_provider_holder):
    """A real OpenID provider with ragweb, as Django's test client calls it (http://testserver), as
    its client; ragweb's settings point at it.

    One process serves the tests one after another: each test starts with no accounts, and its
    requests.Session holds the only provider session it signs in with, so nothing carries over. A test
    that stops it (the provider-down cases) gets a fresh one started for the next test."""
    handle = _oidc_provider_holder["handle"]
    if handle is None or handle.process.poll() is not None:
        handle = idp.start(_oidc_provider_holder["dir"], app_base_url="http://testserver")
        _oidc_provider_holder["handle"] = handle
    handle.accounts_file.write_text("{}")
    return handle
