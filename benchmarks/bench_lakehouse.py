"""An Iceberg table read through auger, beside the same Parquet files read as a directory.

Writes ``--mb`` MB of Parquet as an Iceberg table (pyiceberg, a SQL catalog on SQLite) in a
temporary directory, then times the same queries two ways in one embedded auger engine: over
the table (its metadata plans the files) and over its ``data`` folder as plain Parquet. The
difference is what reading a table from its metadata costs. Best of ``--repeat`` runs;
nothing is asserted.

Usage: ``python benchmarks/bench_lakehouse.py [--mb 500] [--repeat 5] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def make_table(root: Path, mb: int) -> Path:
    import numpy as np
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("bench", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    catalog.create_namespace_if_not_exists("b")
    if catalog.table_exists("b.t"):
        return root / "b" / "t"
    rows_per_chunk = 2_000_000
    schema = pa.schema(
        [("id", pa.int64()), ("k", pa.int64()), ("v", pa.float64()), ("s", pa.string())]
    )
    table = catalog.create_table("b.t", schema)
    rng = np.random.default_rng(7)
    written = 0
    start = 0
    while written < mb * 1_000_000:
        n = rows_per_chunk
        chunk = pa.table(
            {
                "id": np.arange(start, start + n, dtype=np.int64),
                "k": rng.integers(0, 1000, n),
                "v": rng.random(n),
                "s": pa.array([f"name-{i % 50_000}" for i in range(start, start + n)]),
            },
            schema=schema,
        )
        table.append(chunk)
        start += n
        written = sum(p.stat().st_size for p in (root / "b" / "t" / "data").rglob("*.parquet"))
    return root / "b" / "t"


QUERIES = {
    "count(*)": "SELECT COUNT(*) FROM {t}",
    "group by": "SELECT k, COUNT(*), SUM(v) FROM {t} GROUP BY k ORDER BY k LIMIT 5",
    "filter": "SELECT COUNT(*) FROM {t} WHERE id < 1000 AND s = 'name-7'",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-lakehouse-"))
    root.mkdir(parents=True, exist_ok=True)
    location = make_table(root, args.mb)
    size = sum(p.stat().st_size for p in (location / "data").rglob("*.parquet")) / 1e6
    import auger

    config = {
        "storage": {"dfs": {"type": "file", "workspaces": {"b": {"location": str(location)}}}},
        "spark": {"master": "local[2]", "conf": {"spark.ui.enabled": "false"}},
    }
    with auger.connect(config=config) as conn:
        cur = conn.cursor()
        tables = {"iceberg table": "dfs.b.`/`", "its Parquet files": "dfs.b.`data`"}
        print(f"{size:.0f} MB of Parquet in {location}")
        print(f"{'query':<10} {'iceberg table':>14} {'its Parquet files':>18}  same")
        for label, sql in QUERIES.items():
            best: dict[str, float] = {}
            answers = {}
            for name, table in tables.items():
                times = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    cur.execute(sql.format(t=table))
                    answers[name] = cur.fetchall()
                    times.append(time.perf_counter() - t0)
                best[name] = min(times)
            same = len({repr(a) for a in answers.values()}) == 1
            print(
                f"{label:<10} {best['iceberg table']:>13.3f}s {best['its Parquet files']:>17.3f}s"
                f"  {'yes' if same else 'NO'}"
            )


if __name__ == "__main__":
    main()
