"""HTTPS over the pinned address: the certificate is still checked against the host name in the URL."""

from __future__ import annotations

import ssl
import subprocess

import pytest

from sources.web import transport
from sources.web.fetch import FetchError, fetch
from tests.sources.http_site import HttpSite


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    """A certificate authority and a certificate it signed for pinned.example (openssl)."""
    folder = tmp_path_factory.mktemp("tls")

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=ragweb test authority")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
            "-subj", "/CN=pinned.example")
    (folder / "san.ext").write_text("subjectAltName=DNS:pinned.example\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "2", "-extfile", "san.ext")
    return folder


@pytest.fixture
def tls_site(certificates, monkeypatch, resolve_to):
    monkeypatch.setattr(transport, "tls_context",
                        lambda: ssl.create_default_context(cafile=str(certificates / "ca.pem")))
    resolve_to({"pinned.example": ["127.0.0.1"], "other.example": ["127.0.0.1"]})
    with HttpSite(tls=(str(certificates / "server.pem"), str(certificates / "server.key"))) as served:
        yield served


def test_https_connects_to_the_checked_address_with_the_names_certificate(tls_site):
    tls_site.pages["/"] = "<p>secure</p>"
    fetched = fetch(f"https://pinned.example:{tls_site.port}/")
    assert fetched.body == b"<p>secure</p>"
    assert tls_site.requests[-1].headers["Host"] == f"pinned.example:{tls_site.port}"


def test_a_certificate_for_another_name_is_refused(tls_site):
    tls_site.pages["/"] = "<p>secure</p>"
    with pytest.raises(FetchError, match="^TLS certificate of other.example not valid"):
        fetch(f"https://other.example:{tls_site.port}/")
