"""`make reliability` = `python -m reliability`: start the app as `make run` does (its own data
folder var/reliability/ and free ports), then faults, hostile input, security and load, and print
one summary table (also written to var/reliability/summary.md and report.json).

    python -m reliability [--only faults,hostile,security,consent,slow,limits,load,llm,web,stall] [--kills 10]
                          [--files 60]
                                [--load-seconds 60] [--no-baseline] [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

from reliability.app import ROOT, App, configure_django

SECTIONS = ("faults", "hostile", "security", "consent", "slow", "limits", "load", "llm", "web", "stall")
# Also "memory", not in the default run (a measurement for a quiet machine): `make measure-memory`.
GB = 1024 ** 3


@dataclass
class Row:
    section: str
    scenario: str
    ok: bool
    detail: str


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS))
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--load-seconds", type=float, default=60)
    parser.add_argument("--search-clients", type=int, default=50)
    parser.add_argument("--ask-clients", type=int, default=10)
    parser.add_argument("--no-baseline", dest="baseline", action="store_false",
                        help="skip the same search load against runserver (how make run served before)")
    parser.add_argument("--quick", action="store_true", help="small numbers: a check of the harness itself")
    parser.add_argument("--kinds", default="",
                        help="only the hostile files whose kind or name contains one of these (comma-separated), "
                             "e.g. .xlsx,.eml")
    parser.add_argument("--var", type=Path, default=ROOT / "var" / "reliability")
    args = parser.parse_args(argv)
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    if args.quick:
        args.kills, args.files, args.load_seconds = 2, 6, 10
        args.search_clients, args.ask_clients = 10, 3
    work = args.var.resolve()  # the services are restarted from other working folders mid-run
    work.mkdir(parents=True, exist_ok=True)
    app = App(work / "app")
    configure_django(app.var, app.pg_port, app.redis_port)
    rows: list[Row] = []
    started = time.monotonic()
    print(f"starting the app (make run) on port {app.port}; log: {app.log_path}", flush=True)
    try:
        app.start()
        from reliability.security import create_user

        _, token = create_user("harness", staff=True)
        for section in sections:
            print(f"\n== {section} ==", flush=True)
            first = len(rows)
            try:
                rows.extend(RUNNERS[section](app, token, work, args))
            except Exception as exc:  # a section that breaks is a failed row, and the others still run
                traceback.print_exc()
                rows.append(Row(section, "(the section itself)", False, f"{type(exc).__name__}: {exc}"))
            for row in rows[first:]:
                print(f"  {'PASS' if row.ok else 'FAIL'}  {row.scenario}: {row.detail}", flush=True)
    finally:
        app.stop()
    table = render(rows, time.monotonic() - started)
    print("\n" + table)
    (work / "summary.md").write_text(table + "\n")
    (work / "report.json").write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 0 if all(r.ok for r in rows) else 1


def render(rows: list[Row], seconds: float) -> str:
    lines = ["| section | scenario | result | details |", "|---|---|---|---|"]
    for row in rows:
        detail = row.detail.replace("|", "/").replace("\n", " ")
        lines.append(f"| {row.section} | {row.scenario} | {'pass' if row.ok else '**FAIL**'} | {detail} |")
    passed = sum(r.ok for r in rows)
    lines.append(f"\n{passed} of {len(rows)} passed in {seconds / 60:.0f} min.")
    return "\n".join(lines)


# --- sections ---

def run_faults(app: App, token: str, work: Path, args) -> list[Row]:
    from reliability import faults

    rows = []
    for result in (faults.worker_kills(app, token, work / "files", files=args.files, kills=args.kills),
                   faults.redis_restart(app, token, work / "files", files=max(6, args.files // 3)),
                   faults.postgres_restart(app, token, work / "files", files=max(6, args.files // 3))):
        outcome = result.outcome
        detail = (f"{outcome.ready} ready, {outcome.failed} failed of {outcome.documents} "
                  f"({outcome.chunks} chunks checked)" if outcome else "")
        if outcome and not outcome.ok:
            detail += f"; {outcome.problems()}"
        detail += f"; web: {_web(result.web)}"
        if result.problems:
            detail += f"; {'; '.join(result.problems)}"
        detail += f"; {'; '.join(n for n in result.notes if not n.startswith(('HTTP', 'POST', 'GET')))}"
        rows.append(Row("faults", result.name, result.ok, detail))
    return rows


def _web(counts) -> str:
    keys = ["ok", "clear", "bad", "dropped"]
    text = ", ".join(f"{counts.get(k, 0)} {k}" for k in keys)
    codes = [f"{k} x{v}" for k, v in counts.items() if k.startswith("HTTP")]
    return text + (f" ({', '.join(codes)})" if codes else "")


def run_hostile(app: App, token: str, work: Path, args) -> list[Row]:
    from reliability import hostile

    app.request("POST", "/api/collections/", json_body={"name": "Hostile", "slug": "hostile"}, token=token)
    kinds = [k for k in hostile.KINDS if k.light] if args.quick else hostile.KINDS
    wanted = [w.strip().lower() for w in args.kinds.split(",") if w.strip()]
    if wanted:
        kinds = [k for k in kinds if any(w in k.kind.lower() or w in k.name.lower() for w in wanted)]
    results = hostile.run_api(app, token, "hostile", kinds)
    folder = work / "hostile-cli"
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    results += hostile.run_cli(app, "hostile-cli", kinds, folder)
    rows = []
    for result in results:
        detail = f"{result.outcome}"
        if result.message:
            detail += f": {result.message[:110]}"
        if result.peak_rss and result.way == "api":
            detail += f"; worker peak RSS {result.peak_rss / GB:.2f} GB"
        if result.problem:
            detail += f"; PROBLEM: {result.problem}"
        rows.append(Row("hostile", f"{result.kind} ({result.way})", not result.problem, detail))
    peaks = [r.peak_rss for r in results if r.peak_rss]
    if peaks:
        worst = max(peaks)
        rows.append(Row("hostile", "worker peak RSS over all hostile files", worst < hostile.RSS_LIMIT,
                        f"{worst / GB:.2f} GB (limit 2 GB)"))
    return rows


def run_security(app: App, token: str, work: Path, args) -> list[Row]:
    from reliability import llm_key, security, takeover

    rows = []
    for result in (security.xss(app), security.permissions(app), takeover.slug_takeover(app),
                   takeover.stale_permission(app), llm_key.llm_key_kept(app),
                   security.schemathesis_run(app, work, max_examples=10 if args.quick else 30,
                                             max_time=120 if args.quick else 600)):
        detail = f"{result.checked} checked"
        if result.failures:
            detail += f"; {len(result.failures)} failures: {'; '.join(result.failures[:5])}"
        if result.notes:
            detail += f"; {'; '.join(result.notes[:3])}"
        rows.append(Row("security", result.name, result.ok, detail))
    return rows


def run_consent(app: App, token: str, work: Path, args) -> list[Row]:
    """Sharing needs consent and un-sharing takes back (invitations, paused sources, moves), hard
    links out of SOURCES_FOLDERS, and HTML in every API text field."""
    from reliability import api_text, consent

    app.folders.mkdir(parents=True, exist_ok=True)
    rows = [Row("consent", scenario, ok, detail) for scenario, ok, detail in consent.run(app, work)]
    try:
        result = api_text.api_text_fields(app)
    except Exception as exc:  # a check that breaks is a failed row
        return [*rows, Row("consent", "HTML in every API text field", False, f"{type(exc).__name__}: {exc}")]
    detail = f"{result.checked} checked"
    if result.failures:
        detail += f"; {len(result.failures)} failures: {'; '.join(result.failures[:5])}"
    if result.notes:
        detail += f"; {'; '.join(result.notes)}"
    return [*rows, Row("consent", result.name, result.ok, detail)]


def run_slow(app: App, token: str, work: Path, args) -> list[Row]:
    from reliability import slow

    rows = []
    seconds = 10 if args.quick else 40
    results = [slow.slow_clients(app, token, sockets=sockets, seconds=seconds) for sockets in (8, 32)]
    try:
        from reliability.proxy import proxy_checks

        results += proxy_checks(app, work, slow_sockets=32, seconds=seconds)
    except RuntimeError as exc:  # no nginx here: a failed row, not a silent skip
        rows.append(Row("slow clients", "nginx (deploy/nginx.conf) in front of the app", False, str(exc)))
    for result in results:
        detail = f"{result.checked} checked; {'; '.join(n for n in result.notes if n)}"
        if result.failures:
            detail += f"; {len(result.failures)} failures: {'; '.join(result.failures[:3])}"
        rows.append(Row("slow clients", result.name, result.ok, detail))
    return rows


def run_limits(app: App, token: str, work: Path, args) -> list[Row]:
    from reliability import limits

    result = limits.oversized_history(app, token, parallel=4 if args.quick else 12, rounds=1 if args.quick else 2)
    return [Row("limits", result.name, result.ok, result.detail())]


def run_load(app: App, token: str, work: Path, args) -> list[Row]:
    from reliability import load

    load.run(app, endpoint="search", clients=min(10, args.search_clients), seconds=5)  # warm-up, not counted
    rows = []
    search = load.run(app, endpoint="search", clients=args.search_clients, seconds=args.load_seconds)
    print("  " + search.line(), flush=True)
    floor = load.query_embedding_cpu()
    ok = (search.server_errors == 0 and search.dropped == 0 and search.percentile(95) < 1.0
          and search.throughput >= 56)
    rows.append(Row("load", f"search, {search.clients} clients, {search.seconds:.0f} s", ok,
                    _load_detail(search) + f"; embedding one query alone: {floor * 1000:.1f} ms CPU "
                    f"(server CPU per search = {search.cpu_per_request / floor:.1f}x that)"))
    if args.baseline:
        with load.Runserver(app) as old:
            load.run(old, endpoint="search", clients=min(10, args.search_clients), seconds=5)  # warm-up
            before = load.run(old, endpoint="search", clients=args.search_clients, seconds=args.load_seconds,
                              name="search on runserver (before)")
        print("  " + before.line(), flush=True)
        rows.append(Row("load", f"search on runserver, as make run served before, {before.clients} clients, "
                        f"{before.seconds:.0f} s (for comparison)", True, _load_detail(before)))
        rows.append(Row("load", "search throughput, gunicorn against runserver (same run)",
                        search.throughput >= 2 * before.throughput and before.dropped >= search.dropped,
                        f"{search.throughput:.1f} against {before.throughput:.1f} requests/s = "
                        f"{search.throughput / max(before.throughput, 1e-9):.2f}x; p95 {search.percentile(95):.2f} "
                        f"against {before.percentile(95):.2f} s; dropped {search.dropped} against {before.dropped}"))
    ask = load.run(app, endpoint="ask", clients=args.ask_clients, seconds=args.load_seconds)
    print("  " + ask.line(), flush=True)
    rows.append(Row("load", f"ask (extractive), {ask.clients} clients, {ask.seconds:.0f} s",
                    ask.server_errors == 0 and ask.dropped == 0, _load_detail(ask)))
    rows += [_target_row(search, "searches", SEARCH_TARGET), _target_row(ask, "asks", ASK_TARGET)]
    return rows


# Issue 31's targets on this 2-core machine: (requests/s at least, p95 seconds under); 50 search
# clients, 10 ask clients. Judged on a quiet machine: the row says the load average it ran at.
SEARCH_TARGET = (120.0, 0.5)
ASK_TARGET = (10.0, 1.5)


def _target_row(result, what: str, target: tuple[float, float]) -> Row:
    import os

    per_second, p95 = target
    ok = (result.throughput >= per_second and result.percentile(95) < p95 and result.errors == 0
          and result.dropped == 0)
    return Row("load", f"{what}/s against the target ({result.clients} clients)", ok,
               f"{result.throughput:.1f} {what}/s (target >= {per_second:g}), p95 {result.percentile(95):.2f} s "
               f"(target < {p95:g} s), errors {result.errors}, dropped {result.dropped}; "
               f"load average {os.getloadavg()[0]:.1f} at the end")


def _load_detail(result) -> str:
    errors = f"{result.errors} errors" + (f" ({dict(result.statuses)})" if result.errors else "")
    return (f"{result.completed} requests, {result.throughput:.1f}/s, p50 {result.percentile(50) * 1000:.0f} ms, "
            f"p95 {result.percentile(95) * 1000:.0f} ms, p99 {result.percentile(99) * 1000:.0f} ms, {errors}, "
            f"{result.dropped} dropped; server CPU {result.cpu_per_request * 1000:.1f} ms per request; /healthz "
            f"sampled {sum(result.health.values())} times: {dict(result.health)}, slowest "
            f"{result.health_max_seconds:.1f} s")


def run_llm(app: App, token: str, work: Path, args) -> list[Row]:
    from reliability import faults
    from tests.chat.fake_openai import FakeOpenAI

    timeout = 5.0
    rows = []
    with FakeOpenAI("Tomatoes need water twice a week [1].", token_delay=0.05) as fake:
        app.restart(LLM_BASE_URL=fake.base_url, LLM_MODEL="fake", LLM_API_KEY="x", LLM_TIMEOUT=str(timeout),
                    LLM_MAX_RETRIES="0")
        try:
            for result in faults.llm_faults(app, token, fake, llm_timeout=timeout):
                detail = "; ".join(result.notes)
                if result.problems:
                    detail += f"; PROBLEM: {'; '.join(result.problems)}"
                rows.append(Row("faults", result.name, result.ok, detail))
        finally:
            app.restart()
    return rows


def run_web(app: App, token: str, work: Path, args) -> list[Row]:
    from reliability import websources

    return [Row("web sources", scenario, ok, detail) for scenario, ok, detail in websources.run()]


def run_stall(app: App, token: str, work: Path, args) -> list[Row]:
    from reliability import stall

    return [Row("stall", scenario, ok, detail) for scenario, ok, detail in stall.run(app)]


def run_memory(app: App, token: str, work: Path, args) -> list[Row]:
    """RSS and PSS of the app's own processes with the demo corpus: idle, after search clients, then
    after ask clients (the issue's targets: <= 1.0 GB idle, <= 1.5 GB after, PSS sums)."""
    from reliability import load, memory

    _wait_for_demo_corpus()
    processes = memory.app_processes(app.run_process())
    waited = memory.wait_until_quiet(processes)  # the start-up's queued work (the sentence fills) done
    print(f"  quiet after {waited:.0f} s", flush=True)
    idle = memory.snapshot(processes)
    print(memory.table("idle", idle), flush=True)
    searched = load.run(app, endpoint="search", clients=args.search_clients, seconds=args.load_seconds)
    print("  " + searched.line(), flush=True)
    after_search = memory.snapshot(processes)
    print(memory.table(f"after {args.search_clients} search clients", after_search), flush=True)
    asked = load.run(app, endpoint="ask", clients=args.ask_clients, seconds=args.load_seconds)
    print("  " + asked.line(), flush=True)
    after_ask = memory.snapshot(memory.app_processes(app.run_process()))
    print(memory.table(f"after {args.ask_clients} ask clients", after_ask), flush=True)
    gb = memory.total_pss
    return [
        Row("memory", "idle, demo corpus (PSS sum of web, worker, scheduler)", gb(idle) <= 1.0 * GB,
            f"{gb(idle) / GB:.2f} GB PSS (RSS sum {sum(m.rss for m in idle) / GB:.2f} GB) in {len(idle)} "
            f"processes; target <= 1.0 GB"),
        Row("memory", f"after {args.search_clients} search clients then {args.ask_clients} ask clients",
            gb(after_ask) <= 1.5 * GB,
            f"{gb(after_search) / GB:.2f} GB PSS after the searches, {gb(after_ask) / GB:.2f} GB after the asks "
            f"(RSS sum {sum(m.rss for m in after_ask) / GB:.2f} GB); target <= 1.5 GB"),
    ]


def _wait_for_demo_corpus(timeout: float = 600) -> None:
    from corpus.models import Document

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        documents = Document.objects.filter(collection__slug="demo")
        if documents.exists() and not documents.exclude(status__in=["ready", "failed"]).exists():
            return
        time.sleep(1)
    raise RuntimeError(f"the demo corpus was not ingested within {timeout:.0f}s")


RUNNERS = {"faults": run_faults, "hostile": run_hostile, "security": run_security, "consent": run_consent,
           "slow": run_slow, "limits": run_limits, "load": run_load, "llm": run_llm, "web": run_web,
           "stall": run_stall, "memory": run_memory}


if __name__ == "__main__":
    sys.exit(main())
