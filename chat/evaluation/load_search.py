"""`python -m chat.evaluation.load_search URL TOKEN EVAL.jsonl [--clients 50] [--seconds 60]`

Concurrent load on a running app: each client (a thread with its own keep-alive HTTP connection)
sends POST /api/search/ with the evaluation questions in turn, as fast as answers come back, for
`--seconds` after `--warm-up` seconds whose requests are not counted. Prints throughput and the
latency percentiles seen by the clients. Standard library only, so it can run against any server.
"""

from __future__ import annotations

import argparse
import http.client
import json
import threading
import time
from urllib.parse import urlsplit


def _questions(path: str) -> list[str]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line)["question"] for line in lines if line.strip()]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="The app's base URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("token", help="An API token (manage.py drf_create_token USER)")
    parser.add_argument("questions", help="Evaluation JSONL whose questions are the queries")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warm-up", type=float, default=10.0)
    parser.add_argument("--collection", default=None, help="Search this collection only")
    args = parser.parse_args()

    questions = _questions(args.questions)
    target = urlsplit(args.url)
    headers = {"Authorization": f"Token {args.token}", "Content-Type": "application/json"}
    started = time.monotonic()
    counting_from, stop_at = started + args.warm_up, started + args.warm_up + args.seconds
    latencies: list[float] = []
    statuses: dict[int | str, int] = {}
    server_ms: list[float] = []
    lock = threading.Lock()

    def client(n: int) -> None:
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=120)
        i = n
        while time.monotonic() < stop_at:
            body = {"query": questions[i % len(questions)], "k": 10, "rse": "balanced"}
            if args.collection:
                body["collection"] = args.collection
            i += args.clients
            sent = time.monotonic()
            try:
                connection.request("POST", "/api/search/", json.dumps(body), headers)
                response = connection.getresponse()
                payload = response.read()
                status: int | str = response.status
            except (OSError, http.client.HTTPException) as exc:
                time.sleep(0.1)  # a server that is down would otherwise be asked in a tight loop
                connection.close()
                connection = http.client.HTTPConnection(target.hostname, target.port, timeout=120)
                payload, status = b"", type(exc).__name__
            done = time.monotonic()
            if sent >= counting_from and done <= stop_at:
                with lock:
                    latencies.append((done - sent) * 1000)
                    statuses[status] = statuses.get(status, 0) + 1
                    if status == 200:
                        server_ms.append(json.loads(payload)["timings_ms"]["total"])
        connection.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if not latencies:
        raise SystemExit("no request completed inside the measured window")
    print(f"{args.clients} clients, {args.seconds:.0f} s measured after {args.warm_up:.0f} s of warm-up: "
          f"{len(latencies)} requests, {len(latencies) / args.seconds:.1f} per second; statuses {statuses}")
    print(f"latency seen by the clients, ms: p50 {_percentile(latencies, 50):.0f}, "
          f"p95 {_percentile(latencies, 95):.0f}, p99 {_percentile(latencies, 99):.0f}")
    if server_ms:
        print(f"search() total inside the app, ms: p50 {_percentile(server_ms, 50):.1f}, "
              f"p95 {_percentile(server_ms, 95):.1f}")


if __name__ == "__main__":
    main()
