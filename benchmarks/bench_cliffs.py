"""The cliff hunt: data shapes where a scan may fall off its fast path, each beside DuckDB.

Each shape is generated in a temporary directory (sizes scale with ``--scale``), then one query
over it is timed through auger (SQL through the embedded DB-API: planning, discovery and the
scan all counted) and through DuckDB on the same raw files, best of ``--repeat`` warm runs,
after one warm-up run each. Both answers are compared. Printed side by side with the ratio;
nothing is asserted. The target is auger within 3x of DuckDB on every shape.

Beside it, the same query with the raw-file cache on (``cache on s``, a fresh location): the
first run parses the files and builds their entries, which are waited for, then the best of
``--repeat`` runs reads them, as a person exploring the files runs query after query (a
Parquet table is read as it is, with the cache on or off).

Shapes:

- ``json big values``: a few values of 8 MB among many small JSON records, a filter on LENGTH;
- ``text 400 columns``: a headerless CSV of 400 columns, one column summed;
- ``small files``: thousands of small CSV files with a header, a GROUP BY;
- ``one gzip file``: one large ``.csv.gz``, a GROUP BY;
- ``json 10 levels``: records nested ten maps deep, the innermost member summed;
- ``parquet 200 columns``: ``SELECT *`` of a 200-column Parquet table, fetched whole;
- ``long text lines``: lines of 20,000 characters, MAX(LENGTH(...)).

    .venv/bin/python benchmarks/bench_cliffs.py --scale 1 --repeat 3 [--only json,small]
        [--spark-conf spark.driver.memory=2g --spark-conf spark.driver.maxResultSize=1g]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq


@dataclass(frozen=True)
class Shape:
    name: str
    make: Callable[[Path, float], Path]
    auger_sql: str  # {path} is the data's path
    duckdb_sql: str


def _json_big_values(root: Path, scale: float) -> Path:
    path = root / "big_values.json"
    small = int(300_000 * scale)
    big = max(2, int(24 * scale))
    every = max(1, small // big)
    payload = "x" * (8 * 1024 * 1024)
    with path.open("w") as out:
        for i in range(small):
            out.write(json.dumps({"id": i, "s": "short"}) + "\n")
            if i % every == 0:
                out.write(json.dumps({"id": -i, "s": payload}) + "\n")
    return path


def _text_400_columns(root: Path, scale: float) -> Path:
    path = root / "wide.csv"
    rows = int(50_000 * scale)
    rng = np.random.default_rng(1)
    table = pa.table({f"c{i}": rng.integers(0, 1000, rows) for i in range(400)})
    pacsv.write_csv(table, path, pacsv.WriteOptions(include_header=False))
    return path


def _small_files(root: Path, scale: float) -> Path:
    folder = root / "small"
    folder.mkdir()
    files = int(4000 * scale)
    for i in range(files):
        (folder / f"f{i:05d}.csvh").write_text(
            "id,cat,v\n" + "".join(f"{i * 10 + j},c{j % 5},{j}\n" for j in range(10))
        )
    return folder


def _one_gzip(root: Path, scale: float) -> Path:
    path = root / "one.csv.gz"
    rows = int(3_000_000 * scale)
    rng = np.random.default_rng(2)
    table = pa.table(
        {
            "id": np.arange(rows),
            "cat": pa.array(np.array([f"c{i}" for i in range(20)])[rng.integers(0, 20, rows)]),
            "v": rng.random(rows),
        }
    )
    plain = root / "one.csv"
    pacsv.write_csv(table, plain, pacsv.WriteOptions(include_header=False))
    with plain.open("rb") as src, gzip.open(path, "wb", compresslevel=1) as dst:
        shutil.copyfileobj(src, dst)
    plain.unlink()
    return path


def _json_nested(root: Path, scale: float) -> Path:
    path = root / "nested.json"
    rows = int(300_000 * scale)
    with path.open("w") as out:
        for i in range(rows):
            value: Any = {"v": i % 97}
            for level in range(9, 0, -1):
                value = {f"l{level}": value}
            out.write(json.dumps({"id": i, **value}) + "\n")
    return path


def _parquet_200(root: Path, scale: float) -> Path:
    path = root / "wide.parquet"
    rows = int(200_000 * scale)
    rng = np.random.default_rng(3)
    pq.write_table(pa.table({f"c{i}": rng.random(rows) for i in range(200)}), path)
    return path


def _long_lines(root: Path, scale: float) -> Path:
    path = root / "long.csv"
    rows = int(20_000 * scale)
    with path.open("w") as out:
        for i in range(rows):
            out.write(f"{i},{'y' * (20_000 + i % 100)}\n")
    return path


NESTED = ".".join(f"l{i}" for i in range(1, 10))

SHAPES = [
    Shape(
        "json big values",
        _json_big_values,
        "SELECT COUNT(*) FROM dfs.`{path}` WHERE LENGTH(s) > 1000000",
        "SELECT COUNT(*) FROM read_json('{path}', maximum_object_size=100000000) "
        "WHERE LENGTH(s) > 1000000",
    ),
    Shape(
        "text 400 columns",
        _text_400_columns,
        "SELECT SUM(CAST(columns[399] AS BIGINT)) FROM dfs.`{path}`",
        "SELECT SUM(column399) FROM read_csv('{path}', header=false)",
    ),
    Shape(
        "small files",
        _small_files,
        "SELECT cat, COUNT(*), SUM(CAST(v AS BIGINT)) FROM dfs.`{path}` GROUP BY cat ORDER BY cat",
        "SELECT cat, COUNT(*), SUM(v) FROM read_csv('{path}/*.csvh', header=true) "
        "GROUP BY cat ORDER BY cat",
    ),
    Shape(
        "one gzip file",
        _one_gzip,
        "SELECT columns[1], COUNT(*) FROM dfs.`{path}` GROUP BY columns[1] ORDER BY 1",
        "SELECT column1, COUNT(*) FROM read_csv('{path}', header=false) GROUP BY 1 ORDER BY 1",
    ),
    Shape(
        "json 10 levels",
        _json_nested,
        f"SELECT SUM(t.l1.{NESTED[3:]}.v) FROM dfs.`{{path}}` t",
        f"SELECT SUM(l1.{NESTED[3:]}.v) FROM read_json('{{path}}')",
    ),
    Shape(
        "parquet 200 columns",
        _parquet_200,
        "SELECT * FROM dfs.`{path}`",
        "SELECT * FROM '{path}'",
    ),
    Shape(
        "long text lines",
        _long_lines,
        "SELECT MAX(LENGTH(columns[1])) FROM dfs.`{path}`",
        "SELECT MAX(LENGTH(column1)) FROM read_csv('{path}', header=false, max_line_size=1000000)",
    ),
]


def _best(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    answer = run()  # warm-up
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        answer = run()
        best = min(best, time.perf_counter() - t0)
    return best, answer


def _cached_best(
    cur: Any, run: Callable[[], Any], location: Path, repeat: int
) -> tuple[float, Any]:
    """``run``'s best time with the raw-file cache on, once its first run's entries are
    built."""
    from auger.spark.cache_builds import wait_for_builds

    shutil.rmtree(location, ignore_errors=True)
    cur.execute(f"ALTER SESSION SET `auger.cache.location` = '{location}'")
    cur.execute("ALTER SESSION SET `auger.cache.enabled` = true")
    try:
        run()
        wait_for_builds()
        return _best(run, repeat)
    finally:
        cur.execute("ALTER SESSION SET `auger.cache.enabled` = false")
        shutil.rmtree(location, ignore_errors=True)


def _same(a: Any, b: Any) -> bool:
    def norm(rows: Any) -> list[tuple[str, ...]]:
        out = []
        for r in rows:
            out.append(
                tuple(f"{float(v):.6g}" if isinstance(v, int | float) else str(v) for v in r)
            )
        return out

    if hasattr(a, "num_rows"):
        return bool(a.num_rows == b.num_rows)
    return norm(a) == norm(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated words of shape names")
    parser.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting for auger's engine (the 200-column SELECT * at --scale 1, 320 MB, "
        "is past auger.scan.local_answer_bytes and runs in Spark, past its default heap and "
        "result bound: try a larger spark.driver.memory and spark.driver.maxResultSize)",
    )
    args = parser.parse_args()
    spark_conf = dict(kv.split("=", 1) for kv in args.spark_conf)
    import duckdb

    import auger

    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    shapes = [s for s in SHAPES if not wanted or any(w in s.name for w in wanted)]
    root = Path(tempfile.mkdtemp(prefix="auger-cliffs-"))
    duck = duckdb.connect()
    print(
        f"{'shape':<22} {'auger s':>9} {'cache on s':>10} {'duckdb s':>9} {'ratio':>7} "
        f"{'on ratio':>8}  same"
    )
    try:
        # the first column parses every time: the cache is on only where it is measured
        config: dict[str, Any] = {"options": {"auger.cache.enabled": False}}
        if spark_conf:
            config["spark"] = {"conf": spark_conf}
        with auger.connect(config=config) as conn:
            cur = conn.cursor()
            for shape in shapes:
                path = shape.make(root, args.scale)

                def run_auger(sql: str = shape.auger_sql.format(path=path)) -> Any:
                    cur.execute(sql)
                    if sql.startswith("SELECT *"):
                        return cur.fetch_arrow_table()
                    return cur.fetchall()

                def run_duck(sql: str = shape.duckdb_sql.format(path=path)) -> Any:
                    if sql.startswith("SELECT *"):
                        return duck.sql(sql).to_arrow_table()
                    return duck.execute(sql).fetchall()

                a_time, a_answer = _best(run_auger, args.repeat)
                c_time, c_answer = _cached_best(cur, run_auger, root / "cache", args.repeat)
                d_time, d_answer = _best(run_duck, args.repeat)
                same = _same(a_answer, d_answer) and _same(c_answer, d_answer)
                line = (
                    f"{shape.name:<22} {a_time:>9.3f} {c_time:>10.3f} {d_time:>9.3f} "
                    f"{a_time / d_time:>6.1f}x {c_time / d_time:>7.1f}x  "
                    f"{'yes' if same else 'NO'}"
                )
                print(line, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
