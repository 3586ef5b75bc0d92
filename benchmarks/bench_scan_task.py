"""CPU time of one Spark task of an ``auger`` scan, in this process (no Spark).

A Spark task of the ``auger`` data source runs ``AugerReader.read(partition)`` in a Python
worker: the format plugin's reader and the scan around it (conversion to the planned schema,
batches cut to the loader's limits, implicit and missing columns, row counts). This script runs
exactly that for the first partition of each scan, best of ``--repeat``, and prints
``time.process_time()`` (CPU of every thread of the process: pyarrow's readers use threads), so
the figures hold on a shared, loaded machine where Spark's wall-clock timings do not.

Data: a JSON-lines file and a headerless CSV shaped as in ``bench_spark.py`` (``--size-mb``
each, written once under ``--dir``). Queries: one column, a map member, every column and
``COUNT(*)`` (a scan reading no column, one row per reader batch standing for its rows); the
specs are what the SQL planner hands the data source for these queries. ``--profile NAME``
prints the cProfile of one of them. Nothing is asserted.

    .venv/bin/python benchmarks/bench_scan_task.py --size-mb 20
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from bench_spark import _json_lines, _rows_for, _table, _write_csv

from auger.scan.spec import ColumnSource, ScanSpec
from auger.spark.datasource import AugerReader
from auger.spark.direct import plan_direct_read
from auger.types.spark import schema_to_spark


def _data(root: Path, mb: int) -> dict[str, Path]:
    """One file of each format (kept for the next run)."""
    root.mkdir(parents=True, exist_ok=True)
    out = {"json": root / f"data-{mb}mb.json", "csv": root / f"data-{mb}mb.csv"}
    if not out["csv"].exists():
        _write_csv(_table(_rows_for(mb, 48), 0), out["csv"], header=False)
    if not out["json"].exists():
        lines = _json_lines(_table(_rows_for(mb, 130), 0))
        out["json"].write_text("\n".join(lines.to_pylist()) + "\n")
    return out


def _counting(spec: ScanSpec) -> ScanSpec:
    """``COUNT(*)``: no column read, one output row per reader batch holding its row count."""
    rows = "__auger_rows"
    return replace(
        spec, output_schema=f"`{rows}` BIGINT", sources={rows: ColumnSource.ROWS}, projection=()
    )


def _specs(files: dict[str, Path]) -> dict[str, ScanSpec]:
    def plan(fmt: str, path: Path, columns: str = "") -> ScanSpec:
        options = {"path": str(path), "format": fmt}
        if columns:
            options["columns"] = columns
        return plan_direct_read(options)

    json, csv = files["json"], files["csv"]
    return {
        "json one column": plan("json", json, "id"),
        "json map member": plan("json", json, "m.qty"),
        "json two columns": plan("json", json, "category,amount"),
        "json all columns": plan("json", json),
        "json count(*)": _counting(plan("json", json, "id")),
        "csv one column": plan("csv", csv, "columns[0]"),
        "csv two columns": plan("csv", csv, "columns[2],columns[3]"),
        "csv all columns": plan("csv", csv),
        "csv count(*)": _counting(plan("csv", csv, "columns[0]")),
    }


def _task(spec: ScanSpec) -> Callable[[], int]:
    """What one Spark task runs: the reader's ``read`` of the first partition."""
    reader = AugerReader(spec, schema_to_spark(spec.schema()))
    partition = reader.partitions()[0]

    def run() -> int:
        return sum(b.num_rows for b in reader.read(partition))

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "auger-bench-task"))
    ap.add_argument("--only", default="", help="comma list of query names (prefixes)")
    ap.add_argument("--profile", default="", help="a query name: print its cProfile")
    args = ap.parse_args()
    specs = _specs(_data(Path(args.dir), args.size_mb))
    only = [o.strip() for o in args.only.split(",") if o.strip()]
    print(f"{'query':18} {'rows out':>9} {'MB':>6} {'cpu s':>7} {'MB/s':>7}")
    for name, spec in specs.items():
        if only and not any(name.startswith(o) for o in only):
            continue
        run = _task(spec)
        run()  # warm: imports, the first file's plan
        best, rows = float("inf"), 0
        for _ in range(args.repeat):
            start = time.process_time()
            rows = run()
            best = min(best, time.process_time() - start)
        mb = sum(f.size for f in spec.files) / 1e6
        print(f"{name:18} {rows:9d} {mb:6.1f} {best:7.3f} {mb / best:7.0f}", flush=True)
        if name == args.profile:
            prof = cProfile.Profile()
            prof.runcall(run)
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
