"""auger's scans inside Spark vs Spark's native file readers vs DuckDB, side by side.

Generates data (``--mb`` of each format, default 300): headerless CSV, CSV with a header, JSON
lines with a nested map and an array, Parquet, and a 10-directory tree of CSV files with a
header. Then times, best of ``--repeat`` warm runs, the same queries through

- auger (SQL through the DB-API, so planning, discovery and the data source are all counted),
- Spark's native readers in the same SparkSession (a fresh DataFrame per run; JSON and CSV get
  the schema once up front, which favours Spark),
- DuckDB, the single-machine reference.

and prints one table with the auger/Spark ratio. Never used for assertions.

    .venv/bin/python benchmarks/bench_spark.py --mb 300 --repeat 2
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

CATEGORIES = [f"cat{i}" for i in range(20)]


# ------------------------------------------------------------------------------------ data
def _table(n: int, seed: int) -> pa.Table:
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = pa.array(np.arange(seed * 10_000_000, seed * 10_000_000 + n, dtype=np.int64))
    amount = pa.array(np.round(rng.random(n) * 1000, 2))
    cat = pa.array(np.array(CATEGORIES)[rng.integers(0, len(CATEGORIES), n)])
    name = pc.binary_join_element_wise("name_", pc.cast(ids, pa.string()), "")
    qty = pa.array(rng.integers(0, 100, n, dtype=np.int64))
    return pa.table({"id": ids, "name": name, "amount": amount, "category": cat, "qty": qty})


def _rows_for(mb: int, bytes_per_row: int) -> int:
    return max(1000, mb * 1024 * 1024 // bytes_per_row)


def _write_csv(table: pa.Table, path: Path, header: bool) -> None:
    opts = pacsv.WriteOptions(include_header=header, quoting_style="none")
    pacsv.write_csv(table, path, opts)


def _json_lines(table: pa.Table) -> pa.Array:
    s = pc.cast
    parts = [
        '{"id":',
        s(table["id"], pa.string()),
        ',"name":"',
        table["name"],
        '","amount":',
        s(table["amount"], pa.string()),
        ',"category":"',
        table["category"],
        '","m":{"qty":',
        s(table["qty"], pa.string()),
        ',"tag":"',
        table["category"],
        '"},"arr":[',
        s(table["qty"], pa.string()),
        ",1]}",
    ]
    return pc.binary_join_element_wise(*parts, "")


def generate(root: Path, mb: int, files: int = 4) -> dict[str, Path]:
    """Write every data set under ``root`` (skipped when already there)."""
    out = {
        "csv": root / "csv",
        "csvh": root / "csvh",
        "json": root / "json",
        "parquet": root / "parquet",
        "tree": root / "tree",
    }
    marker = root / f".done-{mb}"
    if marker.exists():
        return out
    shutil.rmtree(root, ignore_errors=True)
    for p in out.values():
        p.mkdir(parents=True)
    rows = _rows_for(mb, 48) // files
    for f in range(files):
        t = _table(rows, f)
        _write_csv(t, out["csv"] / f"part-{f}.csv", header=False)
        _write_csv(t, out["csvh"] / f"part-{f}.csvh", header=True)
        pq.write_table(t, out["parquet"] / f"part-{f}.parquet", row_group_size=1_000_000)
    jrows = _rows_for(mb, 130) // files
    for f in range(files):
        lines = _json_lines(_table(jrows, f))
        with open(out["json"] / f"part-{f}.json", "w") as fh:
            fh.write("\n".join(lines.to_pylist()))
            fh.write("\n")
    trows = _rows_for(mb, 48) // 10
    for d in range(10):
        sub = out["tree"] / f"d{d}"
        sub.mkdir()
        _write_csv(_table(trows, 100 + d), sub / "part.csvh", header=True)
    marker.write_text("ok")
    return out


# ------------------------------------------------------------------------------- queries
# name -> (auger SQL, Spark SQL over view `t`, DuckDB SQL over `{src}`)
def queries(ds: str, path: Path) -> dict[str, tuple[str, str, str]]:
    p = str(path)
    if ds == "csv":
        amount, cat, ident = (
            "CAST(columns[2] AS DOUBLE)",
            "columns[3]",
            "CAST(columns[0] AS BIGINT)",
        )
        s_amount, s_cat, s_id = "CAST(_c2 AS DOUBLE)", "_c3", "CAST(_c0 AS BIGINT)"
        d_amount, d_cat, d_id = "CAST(column2 AS DOUBLE)", "column3", "column0"
    else:
        amount, cat, ident = "CAST(amount AS DOUBLE)", "category", "CAST(id AS BIGINT)"
        s_amount, s_cat, s_id = amount, cat, ident
        d_amount, d_cat, d_id = "amount", "category", "id"
    a_src = f"dfs.`{p}`"
    d_src = {
        "csv": f"read_csv('{p}/*.csv', header=false, all_varchar=true, "
        "names=['column0','column1','column2','column3','column4'])",
        "csvh": f"read_csv('{p}/*.csvh', header=true)",
        "json": f"read_json('{p}/*.json', format='newline_delimited')",
        "parquet": f"read_parquet('{p}/*.parquet')",
        "tree": f"read_csv('{p}/*/*.csvh', header=true, filename=true)",
    }[ds]
    if ds == "csvh" or ds == "tree":
        d_amount = "CAST(amount AS DOUBLE)"
    q: dict[str, tuple[str, str, str]] = {
        "full aggregate": (
            f"SELECT {cat} AS c, COUNT(*) AS n, SUM({amount}) AS s FROM {a_src} GROUP BY {cat}",
            f"SELECT {s_cat} AS c, COUNT(*) AS n, SUM({s_amount}) AS s FROM t GROUP BY {s_cat}",
            f"SELECT {d_cat} AS c, COUNT(*) AS n, SUM({d_amount}) AS s FROM {d_src} "
            f"GROUP BY {d_cat}",
        ),
        "narrow projection": (
            f"SELECT MAX({ident}) AS m FROM {a_src}",
            f"SELECT MAX({s_id}) AS m FROM t",
            f"SELECT MAX(CAST({d_id} AS BIGINT)) AS m FROM {d_src}",
        ),
        "count(*)": (
            f"SELECT COUNT(*) AS n FROM {a_src}",
            "SELECT COUNT(*) AS n FROM t",
            f"SELECT COUNT(*) AS n FROM {d_src}",
        ),
        "limit 10": (
            f"SELECT * FROM {a_src} LIMIT 10",
            "SELECT * FROM t LIMIT 10",
            f"SELECT * FROM {d_src} LIMIT 10",
        ),
    }
    if ds == "json":
        q["nested member"] = (
            f"SELECT MAX(t.m.qty) AS q FROM {a_src} t",
            "SELECT MAX(t.m.qty) AS q FROM t",
            f"SELECT MAX(m.qty) AS q FROM {d_src}",
        )
    if ds == "tree":
        q["filter dir0 (1 of 10)"] = (
            f"SELECT COUNT(*) AS n, SUM({amount}) AS s FROM {a_src} WHERE dir0 = 'd3'",
            f"SELECT COUNT(*) AS n, SUM({s_amount}) AS s FROM t WHERE dir0 = 'd3'",
            f"SELECT COUNT(*) AS n, SUM({d_amount}) AS s FROM {d_src} WHERE filename LIKE '%/d3/%'",
        )
    return q


def native_frame(spark: Any, ds: str, path: Path, schemas: dict[str, Any]) -> Any:
    """Spark's own reader for a data set (schemas inferred once, outside the timings)."""
    p = str(path)
    if ds == "csv":
        return spark.read.csv(p)
    if ds == "csvh":
        return spark.read.option("header", "true").csv(p + "/*.csvh")
    if ds == "json":
        if "json" not in schemas:
            schemas["json"] = spark.read.json(p).schema
        return spark.read.schema(schemas["json"]).json(p)
    if ds == "parquet":
        return spark.read.parquet(p)
    if ds == "tree":
        from pyspark.sql import functions as F

        df = spark.read.option("header", "true").csv(p + "/*/*.csvh")
        # Spark's file metadata gives the directory, as Drill's dir0
        return df.withColumn(
            "dir0", F.regexp_extract(F.col("_metadata.file_path"), r"/([^/]+)/[^/]+$", 1)
        )
    raise ValueError(ds)


def _same(a: Any, b: Any) -> bool:
    """Equal results, floats within a relative 1e-9 (sums differ in their last bits)."""
    import math

    def key(r: Any) -> str:
        return "|".join(repr(v) for v in r if not isinstance(v, float))

    a, b = sorted(a, key=key), sorted(b, key=key)
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b, strict=True):
        for x, y in zip(ra, rb, strict=True):
            if isinstance(x, float) and isinstance(y, float):
                if not math.isclose(x, y, rel_tol=1e-9):
                    return False
            elif x != y:
                return False
    return True


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mb", type=int, default=300, help="approximate size of each data set")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "auger-bench-spark"))
    ap.add_argument("--datasets", default="csv,csvh,json,parquet,tree")
    ap.add_argument("--no-duckdb", action="store_true")
    args = ap.parse_args()

    import auger

    root = Path(args.dir) / f"{args.mb}mb"
    t0 = time.perf_counter()
    paths = generate(root, args.mb)
    print(f"data in {root} ({time.perf_counter() - t0:.1f}s)")
    for ds, p in paths.items():
        size = sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
        print(f"  {ds:8s} {size / 1e6:8.1f} MB")

    # the raw-file cache off: the scan itself is measured, every query parsing its files
    conn = auger.connect(
        config={"spark": {"master": "local[*]"}, "options": {"auger.cache.enabled": False}}
    )
    spark = conn.session.engine.spark
    duck = None
    if not args.no_duckdb:
        import duckdb

        duck = duckdb.connect()

    schemas: dict[str, Any] = {}
    rows: list[tuple[str, str, float, float, float | None, bool]] = []
    for ds in args.datasets.split(","):
        for qname, (a_sql, s_sql, d_sql) in queries(ds, paths[ds]).items():
            conn.cursor().execute(a_sql).fetchall()  # warm: workers, discovery cache

            def run_auger(sql: str = a_sql) -> Any:
                return conn.cursor().execute(sql).fetchall()

            def run_spark(sql: str = s_sql, ds: str = ds) -> Any:
                native_frame(spark, ds, paths[ds], schemas).createOrReplaceTempView("t")
                return [tuple(r) for r in spark.sql(sql).collect()]

            run_spark()
            a_t, a_res = best(run_auger, args.repeat)
            s_t, s_res = best(run_spark, args.repeat)
            d_t = None
            if duck is not None:
                d_t, _ = best(lambda sql=d_sql: duck.execute(sql).fetchall(), args.repeat)
            same = qname.startswith("limit") or _same(a_res, s_res)
            rows.append((ds, qname, a_t, s_t, d_t, same))
            print(f"  {ds:8s} {qname:24s} auger {a_t:7.2f}s  spark {s_t:7.2f}s", flush=True)

    print()
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}"
    )
    print(f"spark {spark.version}, master {spark.sparkContext.master}, data ~{args.mb} MB per set")
    head = f"| {'data':8s} | {'query':24s} | auger s | spark s | duckdb s | auger/spark | same |"
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    full: dict[str, float] = {}
    for ds, qname, a_t, s_t, d_t, same in rows:
        if qname == "full aggregate":
            full[ds] = a_t
        duck_txt = f"{d_t:8.2f}" if d_t is not None else "       -"
        print(
            f"| {ds:8s} | {qname:24s} | {a_t:7.2f} | {s_t:7.2f} | {duck_txt} | "
            f"{a_t / s_t:11.2f} | {'yes' if same else 'NO':4s} |"
        )
    print()
    for ds, qname, a_t, *_ in rows:
        if qname.startswith(("filter dir0", "limit")) and ds in full:
            print(f"{ds}: {qname} / full aggregate (auger) = {a_t / full[ds]:.2f}")
    conn.close()


if __name__ == "__main__":
    main()
