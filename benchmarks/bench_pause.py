"""A query over raw files after a person's pause, auger beside DuckDB.

Someone exploring files thinks between queries. Spark stops its idle Python workers after a
minute, so a query over raw files after a longer pause would start them again; auger's engine
keeps them while it is idle (``auger.spark.keep_warm``). This times, through the DB-API, a
GROUP BY over ``--mb`` of CSV with a header (the data set of ``bench_raw_cache.py``, raw-file
cache off so that every query parses through the workers) after each of ``--pauses`` seconds
of idle, with the engine keeping its workers and with that switched off, and DuckDB over the
same files right after (no pause changes DuckDB's time: it keeps no worker processes). Prints
one table with auger/DuckDB ratios. Never used for assertions.

    .venv/bin/python benchmarks/bench_pause.py --mb 300 --pauses 5,70,130
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_raw_cache import _same, generate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=300)
    ap.add_argument("--pauses", default="5,70,130", help="seconds of idle, comma-separated")
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "auger-bench-cache"))
    ap.add_argument(
        "--idle", type=float, default=30.0, help="seconds after Spark's start (the warm-up)"
    )
    args = ap.parse_args()
    pauses = [float(p) for p in args.pauses.split(",") if p.strip()]

    os.environ["AUGER_WARM_UP"] = "1"
    import duckdb

    import auger
    from auger.spark import keep_warm

    keep_for = keep_warm.KEEP_FOR_S
    path = generate(Path(args.dir) / "data", args.mb)["csvh"]
    a_sql = f"SELECT category AS c, COUNT(*) AS n FROM dfs.`{path}` GROUP BY category"
    d_sql = (
        f"SELECT category AS c, COUNT(*) AS n FROM read_csv('{path}/*.csvh', header=true, "
        "all_varchar=true) GROUP BY category"
    )
    conn = auger.connect(config={"spark": {"master": "local[*]"}})
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.cache.enabled` = false")
    cur.execute("SELECT 1 AS a").fetchall()  # Spark starts, and with it the idle warm-up
    time.sleep(args.idle)
    duck = duckdb.connect()
    expected = duck.execute(d_sql).fetchall()
    cur.execute(a_sql).fetchall()
    print(f"# {platform.machine()}, {os.cpu_count()} cores, {args.mb} MB of CSV with a header")
    print("| pause s | workers kept | auger s | duckdb s | auger/duckdb | same |")
    print("|---|---|---|---|---|---|")
    for kept in (True, False):
        keep_warm.KEEP_FOR_S = keep_for if kept else 0.0
        for pause in pauses:
            cur.execute(a_sql).fetchall()  # the pause starts after a query, as a person's
            time.sleep(pause)
            t0 = time.perf_counter()
            rows = cur.execute(a_sql).fetchall()
            secs = time.perf_counter() - t0
            t0 = time.perf_counter()  # DuckDB keeps no process that a pause could stop
            d_rows = duck.execute(d_sql).fetchall()
            d_secs = time.perf_counter() - t0
            same = _same(rows, expected) and _same(d_rows, expected)
            print(
                f"| {pause:g} | {'yes' if kept else 'no'} | {secs:.2f} | {d_secs:.2f} "
                f"| {secs / d_secs:.2f}x | {'yes' if same else 'NO'} |",
                flush=True,
            )
    keep_warm.KEEP_FOR_S = keep_for
    conn.close()
    print("done")


if __name__ == "__main__":
    main()
