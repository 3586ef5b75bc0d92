"""Everyday exploration queries over files already seen once, auger beside DuckDB.

Someone exploring a directory counts its rows, counts distinct values, looks at the top rows by
some column, filters and groups. This times such queries (best of ``--repeat``, through the
DB-API) over the data sets of ``bench_raw_cache.py`` (``--mb`` of CSV with a header and JSON
lines, held in the raw-file cache after a first query, and the CSV's Parquet copy), with DuckDB
over the same raw files (the Parquet copy for the Parquet rows) in the same run. Prints one table
with auger/DuckDB ratios and whether the answers agree (queries whose rows may differ on ties
compare their row counts). Never used for assertions.

    .venv/bin/python benchmarks/bench_explore.py --mb 300 --repeat 3
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

from bench_raw_cache import _same, generate, parquet_copies, timed

#: (data set, query, whether its rows are one answer); {t} is the table
QUERIES = [
    ("csvh", "SELECT COUNT(*) AS n FROM {t}", True),
    ("csvh", "SELECT COUNT(DISTINCT category) AS n FROM {t}", True),
    (
        "csvh",
        "SELECT CAST(qty AS INT) AS q, COUNT(DISTINCT category) AS n FROM {t} "
        "GROUP BY CAST(qty AS INT)",
        True,
    ),
    ("csvh", "SELECT * FROM {t} ORDER BY name DESC LIMIT 5", True),
    ("csvh", "SELECT * FROM {t} ORDER BY CAST(amount AS DOUBLE) DESC LIMIT 5", False),
    ("csvh", "SELECT * FROM {t} WHERE CAST(qty AS INT) = 7 AND category = 'cat3'", True),
    ("json", "SELECT COUNT(*) AS n FROM {t}", True),
    ("json", "SELECT * FROM {t} ORDER BY amount DESC LIMIT 5", False),
    ("csvh-parquet", "SELECT * FROM {t} ORDER BY name LIMIT 5", True),
]


def _sources(ds: str, path: Path) -> tuple[str, str]:
    p = str(path)
    duck = {
        "csvh": f"read_csv('{p}/*.csvh', header=true, all_varchar=true)",
        "json": f"read_json('{p}/*.json', format='newline_delimited')",
        "csvh-parquet": f"read_parquet('{p}/*.parquet')",
    }[ds]
    return f"dfs.`{p}`", duck


def main() -> None:
    # deferred: the benchmark's own dependencies
    import duckdb

    import auger
    from auger.spark.cache_builds import wait_for_builds

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "auger-bench-cache"))
    ap.add_argument("--idle", type=float, default=30.0, help="seconds idle after Spark's start")
    args = ap.parse_args()

    root = Path(args.dir)
    paths: dict[str, Path] = dict(generate(root / "data", args.mb))
    paths["csvh-parquet"] = parquet_copies(root / "data", {"csvh": paths["csvh"]})["csvh"]
    conn = auger.connect(config={"spark": {"master": "local[*]"}})
    cur = conn.cursor()
    cur.execute("SELECT 1 AS a").fetchall()  # Spark starts, and with it the idle warm-up
    time.sleep(args.idle)
    location = root / f"cache-explore-{time.time_ns()}"
    cur.execute(f"ALTER SESSION SET `auger.cache.location` = '{location}'")
    for ds in ("csvh", "json"):  # the first query over the files: their entries after it
        first = f"SELECT category, COUNT(*) FROM {_sources(ds, paths[ds])[0]} GROUP BY category"
        cur.execute(first).fetchall()
        wait_for_builds()
    duck = duckdb.connect()
    print(
        f"# {platform.machine()}, {os.cpu_count()} cores, {args.mb} MB per data set, "
        f"{args.idle:g} s idle after Spark's start, best of {args.repeat}"
    )
    print("| data | query | auger s | duckdb s | auger/duckdb | from cache | same |")
    print("|" + "---|" * 7)
    for ds, query, one_answer in QUERIES:
        a_src, d_src = _sources(ds, paths[ds])
        a_sql, d_sql = query.format(t=a_src), query.format(t=d_src)
        secs, rows = timed(lambda s=a_sql: cur.execute(s).fetchall(), args.repeat)
        cached = sum(s["files_from_cache"] or 0 for s in cur.scan_statistics)
        d_secs, d_rows = timed(lambda s=d_sql: duck.sql(s).fetchall(), args.repeat)
        same = _same(rows, d_rows) if one_answer else len(rows) == len(d_rows)
        print(
            f"| {ds} | `{query.format(t='t')}` | {secs:.2f} | {d_secs:.2f} | "
            f"{secs / d_secs:.2f}x | {cached} | {'yes' if same else 'NO'} |"
        )
    conn.close()


if __name__ == "__main__":
    main()
