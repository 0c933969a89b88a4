"""The provider's discovery document: read once and kept, checked, a failure not kept."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sso import discovery


@pytest.fixture
def idp(settings):
    """A small HTTP server answering the discovery URL with `.document`, counting requests."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            server.hits.append(self.path)
            body = json.dumps(server.document).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.hits = []
    issuer = f"http://127.0.0.1:{server.server_port}"
    server.document = {"issuer": issuer, **{key: f"{issuer}/{key}" for key in discovery.REQUIRED}}
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.OIDC_ISSUER = issuer
    discovery.forget()
    yield server
    server.shutdown()
    discovery.forget()


def test_it_is_read_once_and_kept(idp):
    first = discovery.provider_metadata()
    second = discovery.provider_metadata()
    assert first["token_endpoint"].endswith("/token_endpoint") and second == first
    assert idp.hits == ["/.well-known/openid-configuration"]


def test_a_document_for_another_issuer_is_refused_and_not_kept(idp):
    good = dict(idp.document)
    idp.document["issuer"] = "https://evil.example.org"
    with pytest.raises(discovery.DiscoveryError, match="names the issuer 'https://evil.example.org'"):
        discovery.provider_metadata()
    idp.document = good
    assert discovery.provider_metadata()["issuer"] == good["issuer"]  # tried again
    assert len(idp.hits) == 2


def test_a_document_without_an_endpoint_is_refused(idp):
    del idp.document["jwks_uri"]
    with pytest.raises(discovery.DiscoveryError, match="lacks jwks_uri"):
        discovery.provider_metadata()


def test_a_trailing_slash_in_the_providers_issuer_is_the_same_issuer(idp):
    idp.document["issuer"] += "/"
    assert discovery.provider_metadata()["issuer"].endswith("/")


def test_an_unreachable_provider_is_a_discovery_error(settings):
    settings.OIDC_ISSUER = "http://127.0.0.1:9"
    discovery.forget()
    with pytest.raises(discovery.DiscoveryError, match="could not read http://127.0.0.1:9/.well-known"):
        discovery.provider_metadata()


def test_groups_is_asked_for_only_when_the_provider_offers_it():
    assert discovery.requested_scopes({"scopes_supported": ["openid", "email", "groups"]}) == \
        "openid email profile groups"
    assert discovery.requested_scopes({"scopes_supported": ["openid", "email", "profile"]}) == "openid email profile"
    assert discovery.requested_scopes({}) == "openid email profile"


def test_id_token_algorithms_are_the_providers_asymmetric_ones():
    document = {"id_token_signing_alg_values_supported": ["HS256", "ES256", "none", "RS256", "EdDSA"]}
    assert discovery.id_token_algorithms(document) == ["RS256", "ES256"]
    # Discovery documents without the list: RS256, which every provider must support.
    assert discovery.id_token_algorithms({}) == ["RS256"]
