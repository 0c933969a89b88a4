"""The guarded HTTP client: an httpx2 client whose every connection goes to an address that
outbound.addresses checked, for the name it resolved (DNS rebinding cannot swap the address
between the check and the connection: the socket connects to the checked address, and TLS still
checks the certificate against the name).

`http_client(allowed=..., timeout=...)` is what the openai client is given (`http_client=`), so
the LLM's answers, its model list and the admin's Test all pass the guard. Redirects are not
followed (an API that redirects a POST elsewhere would carry the questions and the key along) and
the environment's proxy variables are ignored (a proxy would resolve the name itself, past the guard).

httpx2 builds its connection pool without a way to pass httpcore2 a network backend (the same as
httpx upstream, encode/httpx#3749), so GuardedTransport builds the pool itself with httpx2's own
TLS settings; everything else is httpx2's HTTPTransport.
"""

from __future__ import annotations

from collections.abc import Iterable

import httpcore2
import httpx2

from outbound import addresses

# Replaced by tests that need a host name to resolve to an address of their choosing.
resolver: addresses.Resolver = addresses.system_resolver
# Addresses of one name tried in turn when the first cannot be reached (as sources.web.hops does).
MAX_ADDRESSES = 3
# httpx2's own defaults (100 connections, 20 kept alive for 5 s): several answers stream at once.
POOL = httpx2.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)


class GuardedBackend(httpcore2.SyncBackend):
    """httpcore2's socket back end, connecting only to checked addresses.

    Raises outbound.addresses.AddressRefused (or NotResolved) before any connection is made. It is
    not an httpx2 error, so it passes through httpx2 and the openai client as it is, never retried
    (it would be refused again); corpus.llm.llm_errors() names it for the LLM's callers."""

    def __init__(self, allowed: addresses.AllowList) -> None:
        self.allowed = allowed

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable | None = None) -> httpcore2.NetworkStream:
        checked = addresses.checked_addresses(host, port, allow_private=False, allowed=self.allowed,
                                              resolver=resolver)
        error: httpcore2.ConnectError | None = None
        for address in checked[:MAX_ADDRESSES]:
            try:
                return super().connect_tcp(str(address), port, timeout=timeout, local_address=local_address,
                                           socket_options=socket_options)
            except httpcore2.ConnectError as exc:  # refused or unreachable: the next checked address
                error = exc
        assert error is not None
        raise error

    def connect_unix_socket(self, *args, **kwargs):
        raise addresses.AddressRefused("refused: not a network address")


class GuardedTransport(httpx2.HTTPTransport):
    def __init__(self, allowed: addresses.AllowList) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore2.ConnectionPool(
            ssl_context=httpx2.create_ssl_context(trust_env=False), network_backend=GuardedBackend(allowed),
            max_connections=POOL.max_connections, max_keepalive_connections=POOL.max_keepalive_connections,
            keepalive_expiry=POOL.keepalive_expiry)


def http_client(*, allowed: addresses.AllowList = addresses.NOTHING_ALLOWED, timeout: float) -> httpx2.Client:
    """A client for requests to other servers: public addresses, and the private hosts `allowed`."""
    return httpx2.Client(transport=GuardedTransport(allowed), timeout=timeout, follow_redirects=False,
                         trust_env=False)
