"""Format reader throughput: auger's scan (``run_scan``) next to the raw pyarrow reader.

Generates a CSV (with header), an NDJSON and a Parquet file of 20 columns in a temp dir, then
times, each in a fresh subprocess (so peak RSS is per case):

* every reader through ``auger.scan.run.run_scan`` reading all 20 columns,
* the raw pyarrow reader of the same file (the practical limit on this machine),
* the scan reading 2 of the 20 columns,
* the raw reader converting 2 of the 20 columns (pyarrow's ``include_columns`` / ``columns``):
  the speed-up the reader itself gets from a narrow projection, to compare the scan's with.

Printed side by side; nothing is asserted. Targets from issue 5: text >= 0.7x raw pyarrow,
JSON >= 0.5x, Parquet >= 0.8x; 2 of 20 columns >= 4x faster than all 20. ``raw up`` is the
raw reader's own 2-of-20 speed-up: a text scan cannot do much better than the parser it uses,
which still has to split every field of every line.

Timings are best of ``--repeat`` subprocess runs (the machine may be shared).

Usage: ``python benchmarks/bench_formats.py [--size-mb 300] [--batch-rows 4096] [--keep DIR]
[--repeat N] [--formats text,json,parquet]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NCOLS = 20
WANTED = ["c3", "c11"]


# ------------------------------------------------------------------------- data
def _row(rnd: random.Random, i: int) -> list[Any]:
    out: list[Any] = []
    for c in range(NCOLS):
        kind = c % 4
        if kind == 0:
            out.append(i * 7 + c)
        elif kind == 1:
            out.append(round(rnd.random() * 1000, 3))
        elif kind == 2:
            out.append(f"name_{rnd.randrange(100000)}_{c}")
        else:
            out.append(rnd.choice(["alpha", "beta", "gamma", "delta, with comma"]))
    return out


def generate(root: Path, size_mb: int) -> dict[str, Path]:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    target = size_mb * 1024 * 1024
    rnd = random.Random(42)
    names = [f"c{i}" for i in range(NCOLS)]
    csv_path, json_path, pq_path = root / "data.csvh", root / "data.json", root / "data.parquet"
    out = {"text": csv_path, "json": json_path, "parquet": pq_path}
    marker = root / f".done-{size_mb}"
    if marker.exists():  # a --keep directory generated before at this size
        return out
    chunk = 20000
    written = 0
    i = 0
    writer: pq.ParquetWriter | None = None
    with open(csv_path, "wb") as fcsv, open(json_path, "w") as fjson:
        fcsv.write((",".join(names) + "\n").encode())
        while written < target:
            rows = [_row(rnd, i + k) for k in range(chunk)]
            i += chunk
            table = pa.table({n: [r[j] for r in rows] for j, n in enumerate(names)})
            buf = pa.BufferOutputStream()
            pacsv.write_csv(table, buf, pacsv.WriteOptions(include_header=False))
            data = buf.getvalue().to_pybytes()
            fcsv.write(data)
            written += len(data)
            fjson.write("".join(json.dumps(dict(zip(names, r, strict=True))) + "\n" for r in rows))
            if writer is None:
                writer = pq.ParquetWriter(pq_path, table.schema)
            writer.write_table(table)
    assert writer is not None
    writer.close()
    marker.write_text("ok")
    return out


# ------------------------------------------------------------------------ cases
def scan_spec(cfg: Any, path: Path, columns: list[str] | None) -> Any:
    """The planned scan of one file in format ``cfg`` (a ``FormatConfig``), as the planner
    makes it: the discovered columns (all those ``*`` expands to, or ``columns``)."""
    from auger.formats import get_format
    from auger.scan.schema import is_excluded_from_wildcard
    from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
    from auger.types import TupleSchema

    options = {"auger.scan.json_sample_rows": 1000}
    table = get_format(cfg.type).discover_schema([str(path)], cfg, options)
    if columns is None:
        cols = [c for c in table if not is_excluded_from_wildcard(c)]
    else:
        cols = [c for c in table if c.name in columns]
    return ScanSpec(
        format_name=cfg.name,
        format_type=cfg.type,
        format_options=dict(cfg.options),
        selection_root=str(path.parent),
        files=(FileSplit(str(path), path.stat().st_size),),
        output_schema=TupleSchema(cols).to_text(),
        sources={c.name: ColumnSource.TABLE for c in cols},
        projection=("*",) if columns is None else tuple(columns),
        options=options,
    )


def _spec(fmt: str, path: Path, columns: list[str] | None) -> Any:
    from auger.config import DEFAULT_FORMATS, FormatConfig

    name = {"text": "csvh", "json": "json", "parquet": "parquet"}[fmt]
    raw = dict(DEFAULT_FORMATS[name])
    cfg = FormatConfig(name, raw.pop("type"), tuple(raw.pop("extensions")), raw)
    return scan_spec(cfg, path, columns)


def run_case(case: str, fmt: str, path: Path, batch_rows: int) -> dict[str, Any]:
    """Time one case in this process; returns rows, seconds and peak RSS (MB)."""
    import pyarrow.csv as pacsv
    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    from auger.scan.run import run_scan

    start = time.perf_counter()
    rows = 0
    if case in ("raw", "raw_two"):
        wanted = WANTED if case == "raw_two" else None
        if fmt == "text":
            reader = pacsv.open_csv(
                str(path),
                read_options=pacsv.ReadOptions(block_size=4 << 20),
                convert_options=pacsv.ConvertOptions(
                    default_column_type=__import__("pyarrow").string(), include_columns=wanted
                ),
            )
            for b in reader:
                rows += b.num_rows
        elif fmt == "json":
            # pyarrow's JSON reader has no column selection: it parses and converts them all
            reader = pajson.open_json(
                str(path), read_options=pajson.ReadOptions(block_size=4 << 20)
            )
            for b in reader:
                rows += b.select(wanted).num_rows if wanted else b.num_rows
        else:
            pf = pq.ParquetFile(str(path))
            for b in pf.iter_batches(batch_size=batch_rows, columns=wanted):
                rows += b.num_rows
    else:
        spec = _spec(fmt, path, None if case == "scan_all" else WANTED)
        start = time.perf_counter()  # planning (discovery) is not the reader's throughput
        for b in run_scan(spec, batch_rows=batch_rows):
            rows += b.num_rows
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rows": rows, "seconds": seconds, "rss_mb": rss}


def run_json(cmd: list[str], label: str) -> dict[str, Any]:
    """Run one timed case as ``cmd`` (a fresh process) and read the figures it printed last."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0:
        # report how the case died (stderr tail); its figures still count if it printed them
        print(f"  [{label}] exited {done.returncode}: {done.stderr.strip()[-800:]}")
    if not lines:
        raise RuntimeError(f"{label} produced no figures")
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def _in_subprocess(case: str, fmt: str, path: Path, batch_rows: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--one", case, fmt, str(path), "--batch-rows", str(batch_rows)]
    return run_json(cmd, f"{case} {fmt}")


def _best(case: str, fmt: str, path: Path, batch_rows: int, repeat: int) -> dict[str, Any]:
    """The fastest of ``repeat`` runs (peak RSS: the largest)."""
    runs = [_in_subprocess(case, fmt, path, batch_rows) for _ in range(max(1, repeat))]
    best = min(runs, key=lambda r: r["seconds"])
    return {**best, "rss_mb": max(r["rss_mb"] for r in runs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=300, help="approximate CSV size to generate")
    ap.add_argument("--batch-rows", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=1, help="runs per case, the best counts")
    ap.add_argument("--formats", default="text,json,parquet", help="formats to time")
    ap.add_argument("--keep", help="generate into (or reuse) this directory")
    ap.add_argument("--one", nargs=3, metavar=("CASE", "FMT", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        case, fmt, path = args.one
        print(json.dumps(run_case(case, fmt, Path(path), args.batch_rows)))
        return
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="auger-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    paths = generate(root, args.size_mb)
    print(f"generated in {time.perf_counter() - t0:.0f}s under {root}")
    for fmt, path in paths.items():
        print(f"  {fmt:8s} {path.stat().st_size / 2**20:8.1f} MB  {path.name}")
    print()
    header = (
        f"{'format':8s} {'raw MB/s':>9s} {'scan MB/s':>9s} {'ratio':>6s} {'target':>6s}"
        f" {'2/20 s':>7s} {'20/20 s':>8s} {'speed-up':>8s} {'raw 2/20':>8s} {'raw up':>7s}"
        f" {'rows':>9s} {'RSS raw':>8s} {'RSS scan':>8s}"
    )
    print(header)
    targets = {"text": 0.7, "json": 0.5, "parquet": 0.8}
    for fmt, path in paths.items():
        if fmt not in args.formats.split(","):
            continue
        mb = path.stat().st_size / 2**20
        raw = _best("raw", fmt, path, args.batch_rows, args.repeat)
        full = _best("scan_all", fmt, path, args.batch_rows, args.repeat)
        two = _best("scan_two", fmt, path, args.batch_rows, args.repeat)
        raw_two = _best("raw_two", fmt, path, args.batch_rows, args.repeat)
        assert raw["rows"] == full["rows"] == two["rows"] == raw_two["rows"], (raw, full, two)
        ratio = raw["seconds"] / full["seconds"]
        print(
            f"{fmt:8s} {mb / raw['seconds']:9.1f} {mb / full['seconds']:9.1f} {ratio:6.2f}"
            f" {targets[fmt]:6.1f} {two['seconds']:7.2f} {full['seconds']:8.2f}"
            f" {full['seconds'] / two['seconds']:7.1f}x {raw_two['seconds']:8.2f}"
            f" {raw['seconds'] / raw_two['seconds']:6.1f}x {full['rows']:9d}"
            f" {raw['rss_mb']:7.0f}M {full['rss_mb']:7.0f}M"
        )
    if not args.keep:
        for p in paths.values():
            os.unlink(p)


if __name__ == "__main__":
    main()
