"""The raw-file cache: a first, a repeated and an other-columns query, auger beside DuckDB.

Generates ``--mb`` of each of headerless CSV, CSV with a header and JSON lines (4 files each),
then for each data set times, through the DB-API (planning, discovery and the scan counted):

- ``first``: the first query over the files (after ``--idle`` seconds, in which auger warms
  Spark up as any session does once it is idle, and a warm-up query over other files, so the
  JVM and Python workers are up): cache off is today's auger; cache on answers the same way
  and builds the entries after the answer, in the background (the ``build`` column: the
  seconds from the answer until the entries are published, waited for before the next query);
- ``repeated``: the same query again (best of ``--repeat``);
- ``other``: a query over other columns of the same files (best of ``--repeat``);

with the cache off and on (a fresh cache location per run), and DuckDB over the same raw files.
Beside them, the same query through auger over a Parquet copy of the data (written once by
pyarrow, every CSV column a string as in the raw files): Spark's own vectorized Parquet reader
with no cache in the way, the limit a cached query can reach inside Spark. Prints one table
with auger/DuckDB ratios. Never used for assertions.

    .venv/bin/python benchmarks/bench_raw_cache.py --mb 300 --repeat 2
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_spark import _json_lines, _rows_for, _table, _write_csv

FILES = 4


def generate(root: Path, mb: int) -> dict[str, Path]:
    """Write the three data sets under ``root`` (kept when already there) and a warm-up one."""
    out = {"csv": root / "csv", "csvh": root / "csvh", "json": root / "json"}
    warm = root / "warm"
    marker = root / f".done-{mb}"
    if marker.exists():
        return out
    shutil.rmtree(root, ignore_errors=True)
    for p in (*out.values(), warm):
        p.mkdir(parents=True)
    rows = _rows_for(mb, 48) // FILES
    jrows = _rows_for(mb, 130) // FILES
    for f in range(FILES):
        t = _table(rows, f)
        _write_csv(t, out["csv"] / f"part-{f}.csv", header=False)
        _write_csv(t, out["csvh"] / f"part-{f}.csvh", header=True)
        lines = _json_lines(_table(jrows, f))
        (out["json"] / f"part-{f}.json").write_text("\n".join(lines.to_pylist()) + "\n")
    _write_csv(_table(20_000, 9), warm / "w.csvh", header=True)
    (warm / "w.json").write_text("\n".join(_json_lines(_table(20_000, 9)).to_pylist()) + "\n")
    _write_csv(_table(20_000, 9), warm / "w.csv", header=False)
    marker.write_text("ok")
    return out


def parquet_copies(root: Path, data: dict[str, Path]) -> dict[str, Path]:
    """A Parquet copy of each data set (kept when already there): strings for the CSV columns,
    pyarrow's inferred types for JSON, one Parquet file per raw file."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    out = {ds: root / f"{ds}-parquet" for ds in data}
    for ds, src in data.items():
        if (out[ds] / ".done").exists():
            continue
        shutil.rmtree(out[ds], ignore_errors=True)
        out[ds].mkdir(parents=True)
        for f in sorted(src.iterdir()):
            if ds == "json":
                table = pajson.read_json(f)
            else:
                names = None if ds == "csvh" else [f"c{i}" for i in range(5)]
                read = pacsv.ReadOptions(column_names=names, block_size=1 << 24)
                head = pacsv.read_csv(f, read_options=read).schema.names
                convert = pacsv.ConvertOptions(column_types=dict.fromkeys(head, pa.string()))
                table = pacsv.read_csv(f, read_options=read, convert_options=convert)
            pq.write_table(table, out[ds] / f"{f.stem}.parquet")
        (out[ds] / ".done").write_text("ok")
    return out


# name -> (auger SQL, DuckDB SQL); {src} is the table
def queries(ds: str, path: Path) -> dict[str, tuple[str, str]]:
    p = str(path)
    a_src = f"dfs.`{p}`"
    d_src = {
        "csv": f"read_csv('{p}/*.csv', header=false, all_varchar=true, "
        "names=['c0','c1','c2','c3','c4'])",
        "csvh": f"read_csv('{p}/*.csvh', header=true, all_varchar=true)",
        "json": f"read_json('{p}/*.json', format='newline_delimited')",
    }[ds]
    if ds == "csv":
        first = (
            f"SELECT columns[3] AS c, COUNT(*) AS n, SUM(CAST(columns[2] AS DOUBLE)) AS s "
            f"FROM {a_src} GROUP BY columns[3]",
            f"SELECT c3 AS c, COUNT(*) AS n, SUM(CAST(c2 AS DOUBLE)) AS s FROM {d_src} GROUP BY c3",
        )
        other = (
            f"SELECT CAST(columns[4] AS INT) AS q, MAX(CAST(columns[0] AS BIGINT)) AS m, "
            f"MAX(columns[1]) AS x FROM {a_src} GROUP BY CAST(columns[4] AS INT)",
            f"SELECT CAST(c4 AS INT) AS q, MAX(CAST(c0 AS BIGINT)) AS m, MAX(c1) AS x "
            f"FROM {d_src} GROUP BY CAST(c4 AS INT)",
        )
    elif ds == "csvh":
        first = (
            f"SELECT category AS c, COUNT(*) AS n, SUM(CAST(amount AS DOUBLE)) AS s "
            f"FROM {a_src} GROUP BY category",
            f"SELECT category AS c, COUNT(*) AS n, SUM(CAST(amount AS DOUBLE)) AS s "
            f"FROM {d_src} GROUP BY category",
        )
        other = (
            f"SELECT CAST(qty AS INT) AS q, MAX(CAST(id AS BIGINT)) AS m, MAX(name) AS x "
            f"FROM {a_src} GROUP BY CAST(qty AS INT)",
            f"SELECT CAST(qty AS INT) AS q, MAX(CAST(id AS BIGINT)) AS m, MAX(name) AS x "
            f"FROM {d_src} GROUP BY CAST(qty AS INT)",
        )
    else:
        first = (
            f"SELECT category AS c, COUNT(*) AS n, SUM(amount) AS s FROM {a_src} GROUP BY category",
            f"SELECT category AS c, COUNT(*) AS n, SUM(amount) AS s FROM {d_src} GROUP BY category",
        )
        other = (
            f"SELECT t.m.qty AS q, MAX(id) AS m, MAX(name) AS x FROM {a_src} t GROUP BY t.m.qty",
            f"SELECT m.qty AS q, MAX(id) AS m, MAX(name) AS x FROM {d_src} GROUP BY m.qty",
        )
    return {"first": first, "repeated": first, "other": other}


def copy_query(ds: str, raw: Path, copy: Path, sql: tuple[str, str]) -> str:
    """The auger statement of ``sql`` over the Parquet copy: DuckDB's text for headerless CSV
    (the copy names its columns ``c0``..``c4``, where the raw files have ``columns[n]``),
    auger's own text for the others."""
    if ds == "csv":
        d_src = sql[1][sql[1].index("FROM ") + 5 : sql[1].index(" GROUP BY")]
        return sql[1].replace(d_src, f"dfs.`{copy}`")
    return sql[0].replace(f"dfs.`{raw}`", f"dfs.`{copy}`")


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _same(a: Any, b: Any) -> bool:
    def key(r: Any) -> str:
        return repr([round(v, 2) if isinstance(v, float) else v for v in r])

    return sorted(map(key, a)) == sorted(map(key, b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "auger-bench-cache"))
    ap.add_argument("--data", nargs="*", default=["csv", "csvh", "json"])
    ap.add_argument(
        "--cache-first",
        action="store_true",
        help="run the cache-on queries before the cache-off ones (the first of a session's "
        "query shapes pays Spark's code generation: swap to see that bias)",
    )
    ap.add_argument(
        "--idle",
        type=float,
        default=10.0,
        help="seconds to wait after Spark's start, as a session has a moment before its "
        "first query: auger's warm-up runs then (0: none, and the warm-up may then run in "
        "the middle of the timings)",
    )
    args = ap.parse_args()

    import duckdb

    import auger
    from auger.spark.cache_builds import wait_for_builds

    root = Path(args.dir)
    paths = generate(root / "data", args.mb)
    copies = parquet_copies(root / "data", paths)
    conn = auger.connect(config={"spark": {"master": "local[*]"}})
    cur = conn.cursor()
    cur.execute("SELECT 1 AS a").fetchall()  # Spark starts, and with it the idle warm-up
    time.sleep(args.idle)
    duck = duckdb.connect()
    print(
        f"# {platform.machine()}, {os.cpu_count()} cores, {args.mb} MB per data set, "
        f"{args.idle:g} s idle after Spark's start"
    )
    head = "| data | query | auger, cache off s | auger, cache on s | auger, Parquet copy s "
    head += "| duckdb s | off/duckdb | on/duckdb | copy/duckdb | from cache | build s | same |"
    print(head)
    print("|" + "---|" * 12)
    for n, ds in enumerate(args.data):
        path = paths[ds]
        qs = queries(ds, path)
        figures: dict[str, dict[str, float]] = {}
        answers: dict[str, dict[str, Any]] = {}
        cached: dict[str, int] = {}
        built: dict[str, dict[str, float]] = {}
        for mode in ("on", "off") if args.cache_first else ("off", "on"):
            location = root / f"cache-{ds}-{n}-{time.time_ns()}"
            cur.execute(f"ALTER SESSION SET `auger.cache.location` = '{location}'")
            cur.execute(f"ALTER SESSION SET `auger.cache.enabled` = {mode == 'on'}")
            warm = root / "data" / "warm" / f"w.{ds}"
            # a scan through the data source, as a first query over larger files is: a file
            # this small is otherwise read on the driver, and Spark's Python workers would
            # start inside the timed query
            cur.execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")
            cur.execute(f"SELECT COUNT(*) FROM dfs.`{warm}`").fetchall()
            cur.execute("ALTER SESSION RESET `auger.scan.local_bytes`")
            for name, (a_sql, _) in qs.items():

                def run(sql: str = a_sql) -> Any:
                    return cur.execute(sql).fetchall()

                secs, rows = timed(run, 1 if name == "first" else args.repeat)
                figures.setdefault(name, {})[mode] = secs
                answers.setdefault(name, {})[mode] = rows
                if mode == "on":
                    cached[name] = sum(s["files_from_cache"] for s in cur.scan_statistics)
                t0 = time.perf_counter()
                wait_for_builds()  # the entries the first query left to build
                built.setdefault(name, {})[mode] = time.perf_counter() - t0
            shutil.rmtree(location, ignore_errors=True)
        cur.execute("ALTER SESSION SET `auger.cache.enabled` = false")
        for name, sql in qs.items():
            c_sql = copy_query(ds, path, copies[ds], sql)
            cur.execute(c_sql).fetchall()  # pays code generation once
            c_secs, c_rows = timed(lambda s=c_sql: cur.execute(s).fetchall(), args.repeat)
            secs, rows = timed(lambda s=sql[1]: duck.sql(s).fetchall(), args.repeat)
            f = figures[name]
            same = all(_same(a, rows) for a in (answers[name]["off"], answers[name]["on"], c_rows))
            print(
                f"| {ds} | {name} | {f['off']:.2f} | {f['on']:.2f} | {c_secs:.2f} | {secs:.2f} | "
                f"{f['off'] / secs:.2f}x | {f['on'] / secs:.2f}x | {c_secs / secs:.2f}x | "
                f"{cached[name]}/{FILES} | {built[name]['on']:.2f} | {'yes' if same else 'NO'} |"
            )
    conn.close()


if __name__ == "__main__":
    main()
