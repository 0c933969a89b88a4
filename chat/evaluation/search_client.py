"""One searching client in a process of its own, started by chat.evaluation.sustained_upload (spawn).

Nothing here imports Django at module level: the new process unpickles `run` by importing this module
before Django is set up, which `run` then does itself.
"""

from __future__ import annotations

import time


def run(database: str, collection_ids: list[int], questions: list[str], ready, halt, results) -> None:
    """The searching client, in a process of its own as a web process is: in the benchmark's process the
    publishers' Python work (building documents) would hold the GIL it needs. Searches the questions in
    turn until `halt`, putting ("latency", ms) on `results`, then ("done", None); ("error", text) if it fails."""
    try:
        import django
        from django.conf import settings

        settings.DATABASES["default"]["NAME"] = database  # the caller's (a test's own database, too)
        django.setup()
        from chat.retrieval import search
        from corpus.models import Collection

        searched = Collection.objects.filter(pk__in=collection_ids)
        search(query="warm up", collections=searched, k=10)
        ready.set()
        step = 0
        while not halt.is_set():
            started = time.perf_counter()
            search(query=questions[step % len(questions)], collections=searched, mode="hybrid", k=10, rse="balanced")
            results.put(("latency", (time.perf_counter() - started) * 1000))
            step += 1
        results.put(("done", None))
    except BaseException as exc:  # noqa: BLE001 — reported to the benchmark, which raises it
        results.put(("error", f"{type(exc).__name__}: {exc}"))
