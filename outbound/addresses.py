"""Which addresses ragweb may connect to: the SSRF guard of every outbound request (web sources
through sources.web, the LLM through outbound.client).

`checked_addresses(host, port)` resolves a host name once and returns the addresses a connection may
use; the caller connects to one of those addresses (never to the name again), so a DNS answer that
changes between the check and the connection (DNS rebinding) cannot slip a private address through.
Every non-public address is refused — loopback, private, link-local (169.254.169.254, the cloud
metadata service), carrier-grade NAT, multicast, reserved, unspecified, their IPv6 forms and IPv4
addresses wrapped in IPv6 (::ffff:127.0.0.1, 6to4, Teredo, NAT64) — unless `allow_private`, or the
operator's AllowList names the host or its address. Numeric spellings that C resolvers accept
(2130706433, 0x7f000001, 0177.0.0.1, 127.1) are read as the address they mean before anything else.

A refusal says only "refused: HOST is not a public address": what a name resolves to, and which
kind of private address that is, would map the inside of the network for whoever may type a URL.
The exception's `detail` keeps both, for the server's log.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# host, port -> the addresses it resolves to (strings). Tests inject their own.
Resolver = Callable[[str, int], list[str]]

RESOLVE_SECONDS = 10.0
# Only digits, dots and hex prefixes: what inet_aton reads as a (legacy) IPv4 spelling.
_NUMERIC_HOST = re.compile(r"^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$", re.IGNORECASE)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_HOST_NAME = re.compile(r"^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?$", re.IGNORECASE)


class AddressRefused(Exception):
    """The host is, or resolves to, an address a connection must not reach, or cannot be resolved.

    str() is for the person who typed the URL (it never names a resolved address); `detail` is for
    the operator's log (the address and why it is refused)."""

    def __init__(self, message: str, *, detail: str = ""):
        super().__init__(message)
        self.detail = detail or message


class NotResolved(AddressRefused):
    """The host name has no address (no DNS answer, or none in time)."""


@dataclass(frozen=True)
class AllowList:
    """The private hosts an operator allows (e.g. a local LLM server): host names, matched as the URL
    spells them (case aside), and addresses or networks, matched against every address the host
    resolves to. Hashable, so clients built for it may be cached."""

    names: frozenset[str] = frozenset()
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowList:
        """The list of `entries` ("llm.internal", "127.0.0.1", "10.0.0.0/8", "::1"); ValueError names
        an entry that is neither a host name nor an address or network (a URL, a port, a space)."""
        names, networks = set(), []
        for entry in (e.strip() for e in entries):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            if not _HOST_NAME.match(entry):
                raise ValueError(f"{entry!r} is neither a host name nor an IP address or network")
            names.add(entry.lower().rstrip("."))
        return cls(frozenset(names), tuple(networks))

    def admits(self, host: str, address: Address) -> bool:
        """Whether a connection to `address`, found for `host`, is allowed although not public."""
        if host.strip("[]").lower().rstrip(".") in self.names:
            return True
        return any(address.version == network.version and address in network for network in self.networks)


NOTHING_ALLOWED = AllowList()


def system_resolver(host: str, port: int, *, timeout: float = RESOLVE_SECONDS) -> list[str]:
    """The addresses the system resolver gives for host (IPv4 and IPv6, TCP), within timeout seconds.

    getaddrinfo has no timeout of its own; it runs in a thread this call stops waiting for, so a DNS
    server that never answers costs a sync seconds, not forever.
    """
    answer: list = []

    def lookup() -> None:
        try:
            answer.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError) as exc:
            answer.append(exc)

    thread = threading.Thread(target=lookup, daemon=True)
    thread.start()
    thread.join(timeout)
    if not answer:
        raise OSError(f"no answer from DNS within {timeout:g} s")
    if isinstance(answer[0], Exception):
        raise answer[0]
    return list(dict.fromkeys(info[4][0] for info in answer[0]))


def literal_address(host: str) -> Address | None:
    """The IP address that host spells, in any form a resolver would accept; None for a name."""
    host = host.strip("[]")
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        pass
    if _NUMERIC_HOST.match(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            raise NotResolved(f"refused: {host} is not a valid address") from None
    return None


def _standard_spelling(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def refusal(address: Address) -> str | None:
    """Why address is not public ("a loopback address"), or None when it is a public address."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if inner is None and address in _NAT64:
            inner = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if inner is not None:
            reason = refusal(inner)
            return f"{reason} wrapped in IPv6 ({inner})" if reason else None
    for test, kind in ((address.is_loopback, "a loopback address"),
                       (address.is_link_local, "a link-local address (cloud metadata lives there)"),
                       (address.is_private, "a private address"),
                       (address.is_multicast, "a multicast address"),
                       (address.is_unspecified, "an unspecified address"),
                       (address.is_reserved, "a reserved address")):
        if test:
            return kind
    if not address.is_global:
        return "not a public address"
    return None


def checked_addresses(host: str, port: int, *, allow_private: bool, allowed: AllowList = NOTHING_ALLOWED,
                      resolver: Resolver = system_resolver) -> list[Address]:
    """The addresses a connection to host:port may use, all of them checked.

    Raises AddressRefused when the host spells or resolves to a non-public address that `allowed`
    does not admit (any one of its addresses: a name that mixes public and private answers is
    refused), and NotResolved when it does not resolve.
    """
    literal = literal_address(host)
    if literal is not None:
        addresses = [literal]
    else:
        try:
            addresses = [ipaddress.ip_address(a.split("%", 1)[0]) for a in resolver(host, port)]
        except (OSError, UnicodeError) as exc:
            raise NotResolved(f"cannot resolve {host}: {exc}") from None
        if not addresses:
            raise NotResolved(f"cannot resolve {host}")
    if not allow_private:
        for address in addresses:
            reason = refusal(address)
            if reason and not allowed.admits(host, address):
                spelled = host.strip("[]") if _standard_spelling(host) else f"{host} ({address})"
                raise AddressRefused(f"refused: {host.strip('[]')} is not a public address",
                                     detail=f"refused: {spelled} is {reason}")
    return addresses
