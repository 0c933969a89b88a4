from __future__ import annotations

import pytest

from tests.sso import provider as idp


@pytest.fixture(scope="session")
def oidc_provider_holder(tmp_path_factory):
    """The provider process shared by the sign-in tests (node and oidc-provider take seconds to start)."""
    holder = {"handle": None, "dir": tmp_path_factory.mktemp("oidc-provider")}
    yield holder
    if holder["handle"] is not None:
        idp.stop(holder["handle"])


def running_provider(holder: dict) -> idp.Provider:
    """The holder's provider with no accounts, started first if there is none or a test stopped it."""
    handle = holder["handle"]
    if handle is None or handle.process.poll() is not None:
        handle = holder["handle"] = idp.start(holder["dir"], app_base_url="http://testserver")
    handle.accounts_file.write_text("{}")
    return handle


@pytest.fixture
def oidc_provider(oidc_provider_holder):
    """A real OpenID provider with ragweb, as Django's test client calls it (http://testserver), as
    its client; ragweb's settings point at it.

    One process serves the tests one after another: each test starts with no accounts, and its
    requests.Session holds the only provider session it signs in with, so nothing carries over. A test
    that stops it (the provider-down cases) gets a fresh one started for the next test."""
    return running_provider(oidc_provider_holder)
