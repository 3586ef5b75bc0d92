"""Load figures for ``auger serve``: concurrent cookie sessions issuing queries over loopback.

Each session logs nothing in (auth off), creates a temporary table of a shared name, then runs
its queries (a mix of a temporary-table read, a Parquet aggregate and a constant select),
checks every answer (COMPLETED and its own rows: no cross-session read) and logs out. Prints
queries per second and latency percentiles; asserts nothing about time.

    python benchmarks/bench_rest.py                 # starts its own server on a free port
    python benchmarks/bench_rest.py --url http://127.0.0.1:8047   # an already running one
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests

QUERIES = (
    "SELECT who, n FROM bench_t",
    "SELECT n_regionkey, COUNT(n_name) c FROM cp.`tpch/nation.parquet` GROUP BY n_regionkey",
    "SELECT 1 AS one",
)


def _post(http: requests.Session, url: str, sql: str) -> dict[str, Any]:
    resp = http.post(url + "/query.json", json={"queryType": "SQL", "query": sql}, timeout=600)
    resp.raise_for_status()
    return dict(resp.json())


def run(url: str, sessions: int, queries: int, max_seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + max_seconds
    skipped = [0]

    def client(i: int) -> None:
        with requests.Session() as http:
            try:
                made = _post(
                    http,
                    url,
                    f"CREATE TEMPORARY TABLE bench_t AS SELECT {i} AS who, "
                    "n_name AS n FROM cp.`tpch/nation.parquet`",
                )
                if made.get("queryState") != "COMPLETED":
                    failures.append(f"session {i}: CTTAS {made}")
                    return
                for q in range(queries):
                    if time.monotonic() > deadline:  # bounded: stop issuing, keep figures
                        with lock:
                            skipped[0] += queries - q
                        break
                    sql = QUERIES[q % len(QUERIES)]
                    started = time.perf_counter()
                    data = _post(http, url, sql)
                    elapsed = time.perf_counter() - started
                    ok = data.get("queryState") == "COMPLETED"
                    if ok and sql.startswith("SELECT who"):
                        ok = {r["who"] for r in data["rows"]} == {i}
                    with lock:
                        latencies.append(elapsed)
                        if not ok:
                            failures.append(f"session {i}: {sql} -> {str(data)[:200]}")
            finally:
                http.get(url + "/logout", timeout=60)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(sessions)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] if latencies else 0.0

    return {
        "queries": len(latencies),
        "skipped": skipped[0],
        "failures": failures,
        "wall_s": wall,
        "qps": len(latencies) / wall if wall else 0.0,
        "p50_ms": pct(0.50) * 1000,
        "p99_ms": pct(0.99) * 1000,
        "mean_ms": statistics.fmean(latencies) * 1000 if latencies else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running server (default: start one)")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument(
        "--max-seconds", type=float, default=900, help="stop issuing queries after this long"
    )
    args = parser.parse_args()
    server = None
    url = args.url
    if url is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.server.helpers import Server

        server = Server(Path(tempfile.mkdtemp(prefix="bench_rest_"))).start()
        url = server.url
        _post(requests.Session(), url, "SELECT 1")  # Spark is up
    try:
        figures = run(url, args.sessions, args.queries, args.max_seconds)
    finally:
        if server is not None:
            leftovers = list(server.tmp.iterdir())
            server.stop()
            print(f"leftover session directories: {len(leftovers)}")
    print(
        f"{args.sessions} sessions x {args.queries} queries: {figures['queries']} queries, "
        f"{len(figures['failures'])} failed, {figures['skipped']} not issued (time bound), "
        f"{figures['wall_s']:.1f} s wall"
    )
    print(
        f"throughput {figures['qps']:.1f} queries/s; latency p50 {figures['p50_ms']:.0f} ms, "
        f"p99 {figures['p99_ms']:.0f} ms, mean {figures['mean_ms']:.0f} ms"
    )
    for failure in figures["failures"][:10]:
        print("FAILED", failure)
    return 1 if figures["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
