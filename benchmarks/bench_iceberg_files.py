"""Iceberg tables of the same rows in Parquet, Avro and ORC data files, read through auger.

Writes ``--rows`` rows as three Iceberg tables (a SQL catalog on SQLite in a temporary
directory): one whose data files pyiceberg writes (Parquet), one of Avro data files and one of
ORC data files (written as the tests write them, with the table's field ids), ``--files`` files
each. Then times the same queries over each table in one embedded auger engine: the Parquet
table goes through Spark's Parquet reader, the others through auger's Avro and ORC readers.
Best of ``--repeat`` runs; nothing is asserted (``same``: the three answers agree, floats to
9 digits).

Usage: ``python benchmarks/bench_iceberg_files.py [--rows 1000000] [--files 4] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

QUERIES = {
    "count(*)": "SELECT COUNT(*) FROM {t}",
    "group by": "SELECT k, COUNT(*), SUM(v) FROM {t} GROUP BY k ORDER BY k LIMIT 5",
    "filter": "SELECT COUNT(*) FROM {t} WHERE id < 1000 AND s = 'name-7'",
}


def rounded(answer: list[tuple[object, ...]]) -> str:
    """An answer with its floats to 9 significant digits: sums of doubles differ in their
    last bits with the order Spark adds them in."""
    return repr([tuple(f"{v:.9g}" if isinstance(v, float) else v for v in r) for r in answer])


def make_tables(root: Path, rows: int, files: int) -> dict[str, Path]:
    import numpy as np
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.sql.iceberg_files import append_file

    catalog = SqlCatalog("bench", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    catalog.create_namespace("b")
    schema = pa.schema(
        [("id", pa.int64()), ("k", pa.int64()), ("v", pa.float64()), ("s", pa.string())]
    )
    rng = np.random.default_rng(7)
    per_file = rows // files
    chunks = []
    for n in range(files):
        start = n * per_file
        ids = np.arange(start, start + per_file, dtype=np.int64)
        chunks.append(
            pa.table(
                {
                    "id": ids,
                    "k": rng.integers(0, 1000, per_file),
                    "v": rng.random(per_file),
                    "s": pa.array([f"name-{i % 50_000}" for i in ids]),
                },
                schema=schema,
            )
        )
    out = {}
    for fmt in ("parquet", "avro", "orc"):
        table = catalog.create_table(f"b.{fmt}", schema)
        data = root / "b" / fmt / "data"
        data.mkdir(parents=True, exist_ok=True)
        for n, chunk in enumerate(chunks):
            if fmt == "parquet":
                table.append(chunk)
            else:
                rows_of = chunk.cast(table.schema().as_arrow())
                append_file(table, rows_of, str(data / f"part-{n}.{fmt}"))
        out[fmt] = root / "b" / fmt
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-iceberg-files-"))
    try:
        run(root, args)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(root: Path, args: argparse.Namespace) -> None:
    locations = make_tables(root, args.rows, args.files)
    import auger

    config = {
        "storage": {"dfs": {"type": "file", "workspaces": {"b": {"location": str(root / "b")}}}},
        "spark": {"master": "local[2]", "conf": {"spark.ui.enabled": "false"}},
    }
    with auger.connect(config=config) as conn:
        cur = conn.cursor()
        for fmt, location in locations.items():
            size = sum(p.stat().st_size for p in (location / "data").iterdir()) / 1e6
            print(f"{fmt:<8} {size:7.1f} MB in {args.files} files")
        print(f"{'query':<10}" + "".join(f"{f:>10}" for f in locations) + "  same")
        for label, sql in QUERIES.items():
            best: dict[str, float] = {}
            answers = {}
            for fmt in locations:
                times = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    cur.execute(sql.format(t=f"dfs.b.`{fmt}`"))
                    answers[fmt] = cur.fetchall()
                    times.append(time.perf_counter() - t0)
                best[fmt] = min(times)
            same = len({rounded(a) for a in answers.values()}) == 1
            cells = "".join(f"{best[f]:>9.3f}s" for f in locations)
            print(f"{label:<10}{cells}  {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
