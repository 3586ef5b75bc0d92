"""What the scan adds per batch on top of an Arrow-native reader.

Writes a CSV (with header), an NDJSON and a Parquet file of 20 columns (about ``--size-mb`` each)
in a temporary directory, plans each as ``spark.read.format("auger")`` would, then:

1. reads the file once through ``run_scan``, keeping the batches the reader handed over;
2. runs ``run_scan`` again over those batches, already in memory (the reader costs nothing),
   handed over ten times in a row so that the scan's per-batch work outweighs timing noise,
   best of ``--repeat``.

The second run is the scan's own cost: bounding batches by the loader's row and byte limits,
conforming them to the planned schema, implicit and missing columns. A third run, whose reader
hands over nothing, is the scan's set-up (tracker, plan, schema text), paid once per task; what
remains, divided by the output batches, is the cost per batch (in microseconds). For
``SELECT *`` and for 2 of the 20 columns. Nothing is asserted; the machine may be shared.

Usage: ``python benchmarks/bench_scan_batches.py [--size-mb 50] [--batch-rows 4096]
[--repeat 5] [--formats text,json,parquet]``
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from auger.formats.registry import get_format
from auger.scan.run import run_scan
from auger.scan.spec import ScanSpec
from auger.spark.direct import plan_direct_read

NCOLS = 20
_TIMES = 10


def _rows(size_mb: float) -> list[dict[str, Any]]:
    rnd = random.Random(7)
    rows: list[dict[str, Any]] = []
    size = 0
    i = 0
    while size < size_mb * 1024 * 1024:
        row: dict[str, Any] = {}
        for c in range(NCOLS):
            kind = c % 4
            if kind == 0:
                row[f"c{c}"] = i * 7 + c
            elif kind == 1:
                row[f"c{c}"] = round(rnd.random() * 1000, 3)
            elif kind == 2:
                row[f"c{c}"] = f"name-{rnd.randrange(100000)}"
            else:
                row[f"c{c}"] = rnd.random() < 0.5
        rows.append(row)
        size += 200
        i += 1
    return rows


def _write(root: Path, size_mb: float, formats: list[str]) -> dict[str, Path]:
    rows = _rows(size_mb)
    out: dict[str, Path] = {}
    if "text" in formats:
        p = root / "data.csvh"
        with p.open("w") as fh:
            fh.write(",".join(rows[0]) + "\n")
            for r in rows:
                fh.write(",".join(str(v) for v in r.values()) + "\n")
        out["text"] = p
    if "json" in formats:
        p = root / "data.json"
        with p.open("w") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
        out["json"] = p
    if "parquet" in formats:
        p = root / "data.parquet"
        pq.write_table(pa.Table.from_pylist(rows), p, row_group_size=1 << 17)
        out["parquet"] = p
    return out


def _spec(path: Path, fmt: str, columns: str | None) -> ScanSpec:
    options = {"path": str(path), "format": {"text": "csvh"}.get(fmt, fmt)}
    if columns:
        options["columns"] = columns
    return plan_direct_read(options)


def _best(spec: ScanSpec, batch_rows: int, repeat: int) -> tuple[int, float]:
    best = float("inf")
    out = 0
    for _ in range(repeat):
        start = time.perf_counter()
        out = sum(1 for _ in run_scan(spec, None, batch_rows))
        best = min(best, time.perf_counter() - start)
    return out, best


def _measure(spec: ScanSpec, batch_rows: int, repeat: int) -> tuple[int, int, float, float, float]:
    """(reader batches, output batches, reader MB, best seconds of the scan's set-up alone
    (its reader hands over nothing), best seconds of the scan over the kept batches)."""
    plugin = type(get_format(spec.format_type))
    original = plugin.read_arrow
    kept: list[pa.RecordBatch] = []
    replayed: list[pa.RecordBatch] = []

    def capture(self: Any, *args: Any, **kw: Any) -> Iterator[pa.RecordBatch]:
        for b in original(self, *args, **kw):
            kept.append(b)
            yield b

    def replay(self: Any, *args: Any, **kw: Any) -> Iterator[pa.RecordBatch]:
        yield from replayed

    try:
        plugin.read_arrow = capture  # type: ignore[method-assign]
        for _ in run_scan(spec, None, batch_rows):
            pass
        plugin.read_arrow = replay  # type: ignore[method-assign]
        _, setup = _best(spec, batch_rows, repeat)
        replayed[:] = kept * _TIMES  # many batches, so that the set-up's noise fades
        out, whole = _best(spec, batch_rows, repeat)
    finally:
        plugin.read_arrow = original  # type: ignore[method-assign]
    mb = sum(b.nbytes for b in kept) / 1e6
    return len(kept), out // _TIMES, mb, setup, whole


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=50)
    ap.add_argument("--batch-rows", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--formats", default="text,json,parquet")
    args = ap.parse_args()
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        files = _write(Path(tmp), args.size_mb, formats)
        print(
            f"{'format':8} {'columns':8} {'in':>5} {'out':>5} {'MB':>7} {'set-up ms':>9} "
            f"{'scan ms':>8} {'us/batch':>9}"
        )
        for fmt, path in files.items():
            for label, columns in (("*", None), ("2 of 20", "c3, c11")):
                spec = _spec(path, fmt, columns)
                n_in, n_out, mb, setup, secs = _measure(spec, args.batch_rows, args.repeat)
                per_batch = max(0.0, secs - setup) / max(n_out * _TIMES, 1) * 1e6
                print(
                    f"{fmt:8} {label:8} {n_in:5d} {n_out:5d} {mb:7.1f} {setup * 1e3:9.1f} "
                    f"{secs * 1e3 / _TIMES:8.1f} {per_batch:9.1f}"
                )


if __name__ == "__main__":
    main()
