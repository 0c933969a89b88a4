"""outbound: the SSRF guard's allow-list and the guarded HTTP client the LLM goes through."""

from __future__ import annotations

import ipaddress
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from outbound import addresses, client
from outbound.addresses import AddressRefused, AllowList, NotResolved

LOCAL = ipaddress.ip_address("127.0.0.1")


def test_an_allow_list_reads_names_addresses_and_networks():
    allowed = AllowList.parse(["LLM.internal.", " 127.0.0.1 ", "10.0.0.0/8", "[::1]", ""])
    assert allowed.names == frozenset({"llm.internal"})
    assert allowed.admits("llm.internal", ipaddress.ip_address("192.168.1.9"))  # a name: whatever it resolves to
    assert allowed.admits("anything.example", LOCAL)
    assert allowed.admits("10.20.30.40", ipaddress.ip_address("10.20.30.40"))
    assert allowed.admits("[::1]", ipaddress.ip_address("::1"))
    assert not allowed.admits("other.internal", ipaddress.ip_address("192.168.1.9"))
    assert not allowed.admits("127.0.0.2", ipaddress.ip_address("127.0.0.2"))


@pytest.mark.parametrize("entry", ["http://llm.internal/", "llm.internal:8080", "two words", "10.0.0.0/33"])
def test_an_allow_list_entry_that_is_not_a_host_is_refused(entry):
    with pytest.raises(ValueError, match="neither a host name nor an IP address or network"):
        AllowList.parse([entry])


def test_the_guard_admits_only_what_the_list_names():
    resolved = {"llm.internal": ["10.1.2.3"], "db.internal": ["10.1.2.4"]}

    def resolver(host, port):
        return resolved[host]

    allowed = AllowList.parse(["llm.internal"])
    assert addresses.checked_addresses("llm.internal", 80, allow_private=False, allowed=allowed,
                                       resolver=resolver) == [ipaddress.ip_address("10.1.2.3")]
    with pytest.raises(AddressRefused) as caught:
        addresses.checked_addresses("db.internal", 80, allow_private=False, allowed=allowed, resolver=resolver)
    assert str(caught.value) == "refused: db.internal is not a public address"  # not where it leads
    assert caught.value.detail == "refused: db.internal (10.1.2.4) is a private address"


class Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str, str]] = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        Recorder.seen.append((self.path, self.headers.get("Host", "")))
        if self.path == "/redirect":
            self.send_response(307)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"hello"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def local_server():
    Recorder.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def test_a_private_address_is_refused_before_any_connection(local_server):
    with client.http_client(timeout=5) as http, pytest.raises(AddressRefused, match="^refused: 127.0.0.1 is not"):
        http.get(f"http://127.0.0.1:{local_server}/")
    assert Recorder.seen == []


def test_a_listed_name_connects_to_the_address_it_was_checked_for(local_server, monkeypatch):
    """DNS rebinding: the name is resolved once, by the guard, and the socket goes to that answer;
    the Host header still names the host."""
    calls = []

    def resolver(host, port):
        calls.append(host)
        return ["127.0.0.1"]

    monkeypatch.setattr(client, "resolver", resolver)
    with client.http_client(allowed=AllowList.parse(["llm.example"]), timeout=5) as http:
        response = http.get(f"http://llm.example:{local_server}/v1/models")
    assert (response.status_code, response.text) == (200, "hello")
    assert calls == ["llm.example"]
    assert Recorder.seen == [("/v1/models", f"llm.example:{local_server}")]


def test_redirects_are_not_followed(local_server):
    with client.http_client(allowed=AllowList.parse(["127.0.0.1"]), timeout=5) as http:
        response = http.get(f"http://127.0.0.1:{local_server}/redirect")
    assert response.status_code == 307 and [path for path, _ in Recorder.seen] == ["/redirect"]


def test_proxy_variables_do_not_bypass_the_guard(local_server, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # a proxy would resolve names itself
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    with client.http_client(allowed=AllowList.parse(["127.0.0.1"]), timeout=5) as http:
        assert http.get(f"http://127.0.0.1:{local_server}/").status_code == 200
    with client.http_client(timeout=5) as http, pytest.raises(AddressRefused):
        http.get(f"http://127.0.0.1:{local_server}/")


def test_a_name_that_does_not_resolve_is_not_resolved():
    with client.http_client(timeout=5) as http, pytest.raises(NotResolved):
        http.get("http://llm-server.invalid/v1/models")
