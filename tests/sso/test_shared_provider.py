"""The sign-in tests share one provider process (tests/sso/conftest.py): each test starts with no
accounts, and a test that stopped it does not leave the next one without a provider."""

from __future__ import annotations

import json

import requests

from tests.sso import provider as idp
from tests.sso.conftest import running_provider


def test_the_shared_provider_starts_empty_and_again_after_a_test_stopped_it(oidc_provider_holder):
    first = running_provider(oidc_provider_holder)
    first.set_account("sub-ada", preferred_username="ada")
    assert running_provider(oidc_provider_holder) is first
    assert json.loads(first.accounts_file.read_text()) == {}  # the next test's accounts are its own

    idp.stop(first)
    second = running_provider(oidc_provider_holder)

    assert second is not first and second.process.poll() is None
    assert requests.get(f"{second.issuer}/.well-known/openid-configuration", timeout=5).json()["issuer"] == \
        second.issuer
