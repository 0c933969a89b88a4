"""ragweb's way out: every request ragweb sends to another server connects only to an address that
outbound.addresses checked (public, or a private host the operator allowed).

- addresses: the SSRF guard (resolve once, refuse non-public addresses, connect to what was checked);
- client: the guarded HTTP client (httpx2) that the LLM client, its model list and its Test use.
Web sources (sources.web) send their GETs through their own capped transport, checked by the same guard.

The lowest layer beside audit: it imports none of ragweb's apps.
"""
