"""Web sources under attack (`make reliability`, section "web"): SSRF attempts, a redirect loop, a
2 GB response, a slow drip and sitemap bombs, against the fetching code itself (sources/web: the
functions every page and site sync goes through) and local servers this harness starts.

Each check returns (scenario, ok, detail) for the summary table. Runs on its own too, without the
app: `python -m reliability.websources` (it needs Redis for the per-host pacing only, and
falls back to per-process pacing without it).
"""

from __future__ import annotations

import gzip
import os
import threading
import time
import zlib
from contextlib import contextmanager

import psutil

MB = 1024 ** 2
GB = 1024 ** 3
MAX_RSS_GROWTH = 100 * MB  # the harness process while a check runs (a 2 GB body held would be 2 GB)

Check = tuple[str, bool, str]


@contextmanager
def _peak_rss():
    """Samples this process's RSS every 20 ms; yields a dict whose "growth" is set on exit."""
    process = psutil.Process()
    result = {"before": process.memory_info().rss, "peak": 0}
    result["peak"] = result["before"]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            result["peak"] = max(result["peak"], process.memory_info().rss)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield result
    finally:
        stop.set()
        sampler.join()
        result["growth"] = result["peak"] - result["before"]


@contextmanager
def _web_settings(response_timeout: float | None = None, *, allow_private: bool = True):
    """Private addresses allowed (the harness's sites are on 127.0.0.1) and no pacing, and the response
    timeout (sources.web.hops.RESPONSE_TIMEOUT) shortened when given."""
    from django.test import override_settings

    from sources.web import hops, pacing, robots

    robots.forget()
    saved = pacing.HOST_INTERVAL, hops.RESPONSE_TIMEOUT
    pacing.HOST_INTERVAL = 0
    if response_timeout is not None:
        hops.RESPONSE_TIMEOUT = response_timeout
    try:
        with override_settings(SOURCES_ALLOW_PRIVATE=allow_private):
            yield
    finally:
        pacing.HOST_INTERVAL, hops.RESPONSE_TIMEOUT = saved
        robots.forget()


def _reason(call) -> tuple[str | None, float]:
    """(FetchError reason or None when call succeeded, seconds)."""
    from sources.web.fetch import FetchError

    started = time.monotonic()
    try:
        call()
    except FetchError as exc:
        return exc.reason, time.monotonic() - started
    return None, time.monotonic() - started


def ssrf_attempts() -> Check:
    """Loopback, metadata, private ranges, odd spellings, a rebinding name, and a redirect into them."""
    from outbound import addresses
    from sources.web import hops
    from sources.web.fetch import fetch
    from tests.sources.http_site import HttpSite, Page

    urls = ["http://127.0.0.1:5432/", "http://localhost:8000/admin/", "http://[::1]/", "http://0x7f000001/",
            "http://2130706433/", "http://0177.0.0.1/", "http://127.1/", "http://169.254.169.254/latest/meta-data/",
            "http://[::ffff:169.254.169.254]/", "http://10.0.0.1/", "http://192.168.1.1/", "http://172.16.0.1/",
            "http://100.64.0.1/", "http://0.0.0.0/", "http://[fd00::1]/", "http://[fe80::1]/",
            "http://[64:ff9b::7f00:1]/", "http://docs.localtest.me/", "file:///etc/passwd", "gopher://127.0.0.1/"]
    failures, refused = [], 0
    original_resolver, original_refusal = hops.resolver, addresses.refusal
    with _web_settings(allow_private=False), HttpSite() as site:
        def resolver(host, port):
            return {"docs.localtest.me": ["127.0.0.1"], "public.example": ["127.0.0.1"]}.get(host) \
                or original_resolver(host, port)

        hops.resolver = resolver
        try:
            for url in urls:
                reason, _ = _reason(lambda u=url: fetch(u))
                if reason and (reason.startswith("refused:") or "only http and https" in reason):
                    refused += 1
                else:
                    failures.append(f"{url}: {reason or 'FETCHED'}")
            # A first hop that is allowed (the harness's server, treated as public) redirecting inside.
            addresses.refusal = lambda a: None if str(a) == "127.0.0.1" else original_refusal(a)
            site.pages["/go"] = Page(status=302, location="http://169.254.169.254/latest/meta-data/iam/")
            site.pages["/go2"] = Page(status=301, location="http://[::1]:5432/")
            for path in ("/go", "/go2"):
                reason, _ = _reason(lambda p=path: fetch(f"http://public.example:{site.port}{p}"))
                if reason and reason.startswith("refused:"):
                    refused += 1
                else:
                    failures.append(f"redirect {path}: {reason or 'FETCHED'}")
        finally:
            hops.resolver, addresses.refusal = original_resolver, original_refusal
    total = len(urls) + 2
    detail = f"{refused} of {total} refused before any connection (loopback, metadata, private, decimal/octal/hex, " \
             f"IPv4-mapped, a name resolving to 127.0.0.1, redirects from an allowed host into them)"
    if failures:
        detail += f"; NOT REFUSED: {'; '.join(failures)}"
    return "SSRF attempts (SOURCES_ALLOW_PRIVATE off)", not failures, detail


def redirect_loop() -> Check:
    from sources.web.fetch import fetch
    from tests.sources.http_site import HttpSite, Page

    with _web_settings(), HttpSite() as site:
        site.pages["/a"] = Page(status=302, location="/b")
        site.pages["/b"] = Page(status=302, location="/a")
        for n in range(100):
            site.pages[f"/r{n}"] = Page(status=307, location=f"/r{n + 1}")
        loop, loop_s = _reason(lambda: fetch(site.url("/a")))
        chain, chain_s = _reason(lambda: fetch(site.url("/r0")))
        requests = len(site.requests)
    ok = bool(loop and "redirect loop" in loop and chain and chain.startswith("too many redirects")
              and max(loop_s, chain_s) < 5)
    return ("redirect loop (/a -> /b -> /a) and a 100-hop chain", ok,
            f"loop: {loop!r} in {loop_s:.2f} s; chain: {chain!r} in {chain_s:.2f} s; {requests} requests in all")


def huge_response() -> Check:
    """A server streaming zeros with no end (a '2 GB response'), and one declaring 2 GB up front."""
    from sources.web import hops
    from sources.web.fetch import fetch
    from tests.sources.http_site import HttpSite, Page

    with _web_settings(), HttpSite() as site:
        site.pages["/zeros"] = Page(endless=True, content_type="text/html")
        site.pages["/declared"] = Page(endless=True, content_type="text/html",
                                       headers={"Content-Length": str(2 * GB)})
        with _peak_rss() as rss:
            endless, endless_s = _reason(lambda: fetch(site.url("/zeros")))
        time.sleep(0.2)
        streamed = site.streamed
        declared, declared_s = _reason(lambda: fetch(site.url("/declared")))
        cap = hops.MAX_BYTES
    too_large = f"too large: more than {cap // MB} MB"
    ok = endless == too_large and declared == too_large and rss["growth"] < MAX_RSS_GROWTH and endless_s < 30
    return ("2 GB response (endless zeros; and Content-Length: 2 GB)", ok,
            f"endless: {endless!r} after {endless_s:.2f} s, the server got to send {streamed / MB:.0f} MB; "
            f"harness RSS +{rss['growth'] / MB:.0f} MB at peak (limit {MAX_RSS_GROWTH // MB} MB); "
            f"declared 2 GB: {declared!r} in {declared_s:.2f} s")


def slow_drip() -> Check:
    from sources.web.fetch import fetch
    from tests.sources.http_site import HttpSite, Page

    with _web_settings(response_timeout=3.0), HttpSite() as site:
        site.pages["/drip"] = Page("<p>" + "x" * 10_000 + "</p>", drip_seconds=0.5)
        reason, seconds = _reason(lambda: fetch(site.url("/drip")))
    ok = bool(reason and reason.startswith("too slow") and seconds < 6)
    return ("slow drip (one byte every 0.5 s, a response timeout of 3 s)", ok,
            f"{reason!r} after {seconds:.2f} s (the whole body would take 83 min)")


def sitemap_bombs() -> Check:
    """Each kind of sitemap bomb against site_pages(): bounded time and memory, a note per limit."""
    from sources.web import sitemaps
    from sources.web.site import site_pages
    from tests.sources.http_site import HttpSite, Page, sitemap

    problems, parts = [], []
    with _web_settings(), HttpSite() as site:
        u = site.url
        # 1 GB of zeros gzipped (~1 MB: under the fetch cap) inside a valid-looking urlset.
        site.pages["/gzip-bomb.xml.gz"] = Page(_gzip_zeros(b'<?xml version="1.0"?><urlset>', GB),
                                               content_type="application/gzip")
        # Indexes nested 20 deep, each with a real sitemap beside the next index.
        for level in range(20):
            site.pages[f"/nest{level}.xml"] = sitemap(u(f"/nest{level + 1}.xml"), u(f"/leaf{level}.xml"), index=True)
            site.pages[f"/leaf{level}.xml"] = sitemap(u(f"/nested-page{level}"))
        # Billion laughs.
        site.pages["/laughs.xml"] = Page(
            b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY l0 "lol">'
            + b"".join(b'<!ENTITY l%d "%s">' % (n, (b"&l%d;" % (n - 1)) * 10) for n in range(1, 10))
            + b"]><urlset><url><loc>" + u("/x").encode() + b"&l9;</loc></url></urlset>",
            content_type="application/xml")
        site.pages["/bombs.xml"] = sitemap(u("/gzip-bomb.xml.gz"), u("/laughs.xml"), u("/nest0.xml"), index=True)
        # One index naming 10,000 sitemaps.
        site.pages["/wide.xml"] = sitemap(*(u(f"/w{n}.xml") for n in range(10_000)), index=True)
        for n in range(10_000):
            site.pages[f"/w{n}.xml"] = sitemap(u(f"/wide-page{n}"))
        # 200,000 entries in one (gzipped) file.
        site.pages["/long.xml.gz"] = Page(gzip.compress(sitemap(*(u(f"/p{n}") for n in range(200_000))).body),
                                          content_type="application/gzip")
        runs = {}
        for name, path in (("bombs", "/bombs.xml"), ("wide", "/wide.xml"), ("long", "/long.xml.gz")):
            first_request = len(site.requests)
            started = time.monotonic()
            with _peak_rss() as rss:
                pages = site_pages(u(path), max_pages=1_000_000, max_depth=3)
            runs[name] = (pages, time.monotonic() - started, rss["growth"], len(site.requests) - first_request)
    expected = {
        "bombs": [("gzip bomb", "once decompressed (a gzip bomb?)"), ("entities", "declares a DOCTYPE"),
                  ("nesting", f"nested more than {sitemaps.MAX_DEPTH} levels deep")],
        "wide": [("10,000 sitemaps", f"more than {sitemaps.MAX_FILES} sitemap files")],
        "long": [("200,000 entries", f"more than {sitemaps.MAX_ENTRIES:,} entries")],
    }
    for name, (pages, seconds, growth, requests) in runs.items():
        for what, text in expected[name]:
            if not any(text in note for note in pages.notes):
                problems.append(f"no note for the {what}")
        if growth > MAX_RSS_GROWTH:
            problems.append(f"{name}: RSS grew {growth / MB:.0f} MB")
        if seconds > 60:
            problems.append(f"{name}: {seconds:.0f} s")
        parts.append(f"{name}: {len(pages)} pages in {seconds:.1f} s, {requests} requests, RSS +{growth / MB:.0f} MB")
    # The leaves beside the indexes read: /bombs.xml is the first of the MAX_DEPTH levels of indexes.
    if len(runs["bombs"][0]) != sitemaps.MAX_DEPTH - 1:
        problems.append(f"bombs: {list(runs['bombs'][0])}")
    if len(runs["long"][0]) != sitemaps.MAX_ENTRIES:
        problems.append(f"long: {len(runs['long'][0])} pages kept")
    detail = "; ".join(parts) + (f"; PROBLEM: {'; '.join(problems)}" if problems else "")
    return ("sitemap bomb (1 GB gzip, billion laughs, 20-deep nesting, 10,000 sitemaps, 200,000 entries)",
            not problems, detail)


def _gzip_zeros(head: bytes, size: int) -> bytes:
    """head then size zero bytes, gzipped without ever holding the zeros (~1 MB per GB)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(MB)
    out = [compressor.compress(head)]
    out += [compressor.compress(zeros) for _ in range(size // MB)]
    return b"".join(out) + compressor.flush()


CHECKS = (ssrf_attempts, redirect_loop, huge_response, slow_drip, sitemap_bombs)


def run() -> list[Check]:
    results = []
    for check in CHECKS:
        try:
            results.append(check())
        except Exception as exc:  # a check that breaks is a failed row; the others still run
            results.append((check.__name__, False, f"{type(exc).__name__}: {exc}"))
    return results


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragweb.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    failed = 0
    for scenario, ok, detail in run():
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'}  {scenario}: {detail}", flush=True)
    raise SystemExit(1 if failed else 0)
