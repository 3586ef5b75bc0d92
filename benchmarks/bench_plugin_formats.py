"""Plugin format readers: auger's scan next to the best plain-Python reader of each format.

For every plugin format (``logRegex``, ``ltsv``, ``syslog``, and ``avro``, ``excel``,
``httpd``, ``xml`` once their plugins are registered under the ``auger.formats`` entry-point
group; a format whose plugin or libraries are missing is reported as not installed) it
generates at least ``--mb`` of data with 20 fields per record, then times, each case in a fresh
subprocess:

* ``raw``: the best Python reader of the format used directly, doing the least parsing the
  plugin must do too: ``re`` over text lines with the typed fields converted (logRegex,
  httpd), ``str.split``/``partition`` (ltsv), ``re`` plus the timestamp and structured data
  (syslog), fastavro (avro), python-calamine (excel), ``ElementTree.iterparse`` (xml);
* ``all``: auger's reader through the scan framework (``run_scan`` on a planned scan, as
  ``bench_formats.py`` does for the built-in formats), every column ``*`` gives;
* ``two``: the same with 2 of the 20 columns projected.

Printed: rows per second per core (rows over the process's CPU seconds, so other work on a
shared machine costs little), auger's rate over the raw reader's, and the speed-up of projecting
2 of 20 columns. Best of ``--repeat`` runs; nothing is asserted.

Excel differs in size: a sheet holds at most 1,048,576 rows, so its file is that many rows at
most whatever ``--mb`` says (the size printed is the ``.xlsx`` file's, which is compressed).

Usage: ``python benchmarks/bench_plugin_formats.py [--mb 200] [--repeat 1] [--batch-rows 4096]
[--formats logRegex,ltsv,syslog] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_formats import run_json, scan_spec

NFIELDS = 20
FIELD_NAMES = [f"f{i}" for i in range(NFIELDS)]
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
_CHUNK_ROWS = 10_000


def _value(i: int, c: int) -> str:
    """Field ``c`` of record ``i`` as text: a number, a decimal, a name or a word, by column."""
    kind = c % 4
    if kind == 0:
        return str(i * 7 + c)
    if kind == 1:
        return f"{(i * 31 + c * 17) % 100000 / 100:.2f}"
    if kind == 2:
        return f"name_{(i * 2654435761 + c) % 100003}"
    return WORDS[(i + c) % len(WORDS)]


def _write_lines(path: Path, target: int, line: Callable[[int], str]) -> int:
    """Write ``line(i)`` for i = 0, 1, ... until the file holds ``target`` bytes; the rows."""
    i = written = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        while written < target:
            text = "".join(line(i + k) + "\n" for k in range(_CHUNK_ROWS))
            out.write(text)
            written += len(text.encode("utf-8"))
            i += _CHUNK_ROWS
    return i


# ----------------------------------------------------------------------------- logRegex
_LOG_TYPES = {0: ("INT", int), 1: ("FLOAT8", float)}  # by column kind; the rest VARCHAR


def _log_line(i: int) -> str:
    return " ".join(_value(i, c) for c in range(NFIELDS))


def _log_options() -> dict[str, Any]:
    schema = [
        {"fieldName": n, "fieldType": _LOG_TYPES.get(c % 4, ("VARCHAR", str))[0]}
        for c, n in enumerate(FIELD_NAMES)
    ]
    return {"regex": " ".join([r"(\S+)"] * NFIELDS), "schema": schema, "maxErrors": 0}


def _raw_log_regex(path: Path) -> int:
    pattern = re.compile(" ".join([r"(\S+)"] * NFIELDS))
    convert = [_LOG_TYPES.get(c % 4, ("VARCHAR", None))[1] for c in range(NFIELDS)]
    typed = [(c, f) for c, f in enumerate(convert) if f is not None]
    rows = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = pattern.fullmatch(line.rstrip("\n"))
            if m is None:
                continue
            values = list(m.groups())
            for c, conv in typed:
                values[c] = conv(values[c])
            rows += 1
    return rows


# --------------------------------------------------------------------------------- ltsv
def _ltsv_line(i: int) -> str:
    return "\t".join(f"{n}:{_value(i, c)}" for c, n in enumerate(FIELD_NAMES))


def _raw_ltsv(path: Path) -> int:
    rows = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            record = {}
            for entry in line.rstrip("\n").split("\t"):
                label, _, value = entry.partition(":")
                record[label] = value
            rows += bool(record)
    return rows


# ------------------------------------------------------------------------------- syslog
# 10 header columns + message + 9 structured-data parameters flattened into columns = 20.
_SD_PARAMS = 9


def _syslog_line(i: int) -> str:
    pri = 8 + i % 184
    day = f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}"
    stamp = f"{day}T{i % 24:02d}:{i % 60:02d}:{i % 59:02d}.{i % 1000:03d}Z"
    params = " ".join(f'p{k}="{_value(i, k)}"' for k in range(_SD_PARAMS))
    return (
        f"<{pri}>1 {stamp} host{i % 97}.example.com app{i % 13} {1000 + i % 5000} "
        f"ID{i % 50} [meta@32473 {params}] request {_value(i, 2)} served in {_value(i, 1)} ms"
    )


_SYSLOG = re.compile(
    r"<(\d{1,3})>1 (\S+) (\S+) (\S+) (\S+) (\S+) (-|(?:\[(?:[^\]\"]|\"(?:[^\"\\]|\\.)*\")*\])+)"
    r"(?: (.*))?"
)
_SD_PARAM = re.compile(r' ([^ =\]"]+)="((?:[^"\\]|\\.)*)"')


def _raw_syslog(path: Path) -> int:
    rows = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _SYSLOG.fullmatch(line.rstrip("\n"))
            if m is None:
                continue
            pri, stamp, _host, _app, _proc, _msgid, sd, _msg = m.groups()
            severity, facility = int(pri) & 7, int(pri) >> 3  # noqa: F841 - the plugin's work
            dt.datetime.fromisoformat(stamp).astimezone(dt.UTC)
            dict(_SD_PARAM.findall(sd))
            rows += 1
    return rows


# -------------------------------------------------------------------------------- httpd
_HTTPD_FORMAT = '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i"'
_AGENTS = [
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0",
    "curl/8.4.0",
]


def _httpd_line(i: int) -> str:
    stamp = f"{1 + i % 28:02d}/Oct/2024:{i % 24:02d}:{i % 60:02d}:{i % 59:02d} +0200"
    path = f"/shop/item/{_value(i, 0)}?ref={_value(i, 3)}&q={_value(i, 2)}"
    return (
        f'10.{i % 250}.{i % 199}.{i % 97} - user{i % 40} [{stamp}] "GET {path} HTTP/1.1" '
        f'{(200, 200, 304, 404)[i % 4]} {i % 50000} "https://example.com/{_value(i, 3)}" '
        f'"{_AGENTS[i % 3]}"'
    )


_COMBINED = re.compile(
    r'(\S+) (\S+) (\S+) \[([^\]]+)\] "([^"]*)" (\d{3}) (\d+|-) "([^"]*)" "([^"]*)"'
)


def _raw_httpd(path: Path) -> int:
    rows = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _COMBINED.fullmatch(line.rstrip("\n"))
            if m is None:
                continue
            g = m.groups()
            dt.datetime.strptime(g[3], "%d/%b/%Y:%H:%M:%S %z")
            g[4].split(" ")  # method, URI, protocol
            int(g[5])
            if g[6] != "-":
                int(g[6])
            rows += 1
    return rows


# ---------------------------------------------------------------------------------- xml
def _xml_record(i: int) -> str:
    fields = "".join(f"<{n}>{_value(i, c)}</{n}>" for c, n in enumerate(FIELD_NAMES))
    return f"<row>{fields}</row>"


def _generate_xml(path: Path, target: int) -> int:
    rows = _write_lines(path, target, _xml_record)
    text = path.read_bytes()  # wrap the records in one root element
    path.write_bytes(b"<rows>\n" + text + b"</rows>\n")
    return rows


def _raw_xml(path: Path) -> int:
    import xml.etree.ElementTree as ET

    rows = 0
    for _, elem in ET.iterparse(path, events=("end",)):
        if elem.tag == "row":
            {child.tag: child.text for child in elem}
            elem.clear()
            rows += 1
    return rows


# --------------------------------------------------------------------------------- avro
def _avro_schema() -> dict[str, Any]:
    types = {0: "long", 1: "double"}
    return {
        "type": "record",
        "name": "Record",
        "fields": [
            {"name": n, "type": ["null", types.get(c % 4, "string")]}
            for c, n in enumerate(FIELD_NAMES)
        ],
    }


def _avro_value(i: int, c: int) -> Any:
    text = _value(i, c)
    return int(text) if c % 4 == 0 else float(text) if c % 4 == 1 else text


def _generate_avro(path: Path, target: int) -> int:
    import fastavro

    rows = 0
    with open(path, "wb") as out:

        def records() -> Any:
            nonlocal rows
            while out.tell() < target:  # the writer flushes a block every few kB
                yield {n: _avro_value(rows, c) for c, n in enumerate(FIELD_NAMES)}
                rows += 1

        fastavro.writer(out, fastavro.parse_schema(_avro_schema()), records())
    return rows


def _raw_avro(path: Path) -> int:
    import fastavro

    rows = 0
    with open(path, "rb") as f:
        for _ in fastavro.reader(f):
            rows += 1
    return rows


# -------------------------------------------------------------------------------- excel
_EXCEL_MAX_ROWS = 1_048_575  # a sheet's rows, less the header


def _generate_excel(path: Path, target: int) -> int:
    import xlsxwriter

    # about 9 bytes of sheet XML per cell survive compression: stop there or at the sheet's end
    rows = min(_EXCEL_MAX_ROWS, max(_CHUNK_ROWS, target // (NFIELDS * 9)))
    book = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    sheet = book.add_worksheet("data")
    sheet.write_row(0, 0, FIELD_NAMES)
    for i in range(rows):
        sheet.write_row(i + 1, 0, [_avro_value(i, c) for c in range(NFIELDS)])
    book.close()
    return rows


def _raw_excel(path: Path) -> int:
    from python_calamine import CalamineWorkbook

    sheet = CalamineWorkbook.from_path(str(path)).get_sheet_by_name("data")
    rows = -1  # the header
    for _ in sheet.iter_rows():
        rows += 1
    return rows


# -------------------------------------------------------------------------------- cases
@dataclass(frozen=True)
class Format:
    """One plugin format of the benchmark: how to make its data, read it raw, configure it."""

    type_name: str
    extension: str
    options: dict[str, Any]
    generate: Callable[[Path, int], int]
    raw: Callable[[Path], int]
    two: tuple[str, str]
    #: modules the generator and the raw reader need
    needs: tuple[str, ...] = ()


def _lines(line: Callable[[int], str]) -> Callable[[Path, int], int]:
    return lambda path, target: _write_lines(path, target, line)


FORMATS: dict[str, Format] = {
    "logRegex": Format("logRegex", "log", _log_options(), _lines(_log_line), _raw_log_regex,
                       ("f3", "f11")),
    "ltsv": Format("ltsv", "ltsv", {}, _lines(_ltsv_line), _raw_ltsv, ("f3", "f11")),
    "syslog": Format("syslog", "syslog", {"flattenStructuredData": True, "maxErrors": 0},
                     _lines(_syslog_line), _raw_syslog, ("app_name", "severity")),
    "avro": Format("avro", "avro", {}, _generate_avro, _raw_avro, ("f3", "f11"),
                   needs=("fastavro",)),
    "excel": Format("excel", "xlsx", {"sheetName": "data"}, _generate_excel, _raw_excel,
                    ("f3", "f11"), needs=("xlsxwriter", "python_calamine")),
    "httpd": Format("httpd", "httpd", {"logFormat": _HTTPD_FORMAT}, _lines(_httpd_line),
                    _raw_httpd, ("connection_client_host", "request_status_last")),
    "xml": Format("xml", "xml", {"dataLevel": 2}, _generate_xml, _raw_xml, ("f3", "f11")),
}  # fmt: skip


def _config(name: str) -> Any:
    from auger.config import FormatConfig

    fmt = FORMATS[name]
    return FormatConfig(name, fmt.type_name, (fmt.extension,), dict(fmt.options))


def missing(name: str) -> str:
    """Why the format cannot be timed here ("" when it can)."""
    from auger.formats.registry import known_formats

    lost = [m for m in FORMATS[name].needs if importlib.util.find_spec(m) is None]
    if lost:
        return f"not installed ({', '.join(lost)} missing)"
    if name.lower() not in {k.lower() for k in known_formats()}:
        return "not installed (no auger.formats entry point)"
    return ""


def run_case(case: str, name: str, path: Path, batch_rows: int) -> dict[str, Any]:
    """Time one case in this process: rows, wall and CPU seconds."""
    from auger.scan.run import run_scan

    fmt = FORMATS[name]
    rows = 0
    if case == "raw":
        wall, cpu = time.perf_counter(), time.process_time()
        rows = fmt.raw(path)
        columns = NFIELDS
    else:
        spec = scan_spec(_config(name), path, None if case == "all" else list(fmt.two))
        columns = len(spec.schema())
        for _ in run_scan(spec, batch_rows=batch_rows):
            break  # the first batch loads what the scan imports lazily: not the reader's cost
        wall, cpu = time.perf_counter(), time.process_time()  # nor is planning
        for batch in run_scan(spec, batch_rows=batch_rows):
            rows += batch.num_rows
    return {
        "rows": rows,
        "columns": columns,
        "seconds": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
    }


def _best(case: str, name: str, path: Path, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--one", case, name, str(path)]
    cmd += ["--batch-rows", str(args.batch_rows)]
    runs = [run_json(cmd, f"{case} {name}") for _ in range(max(1, args.repeat))]
    return min(runs, key=lambda r: r["cpu"])


def _data(root: Path, name: str, mb: int) -> tuple[Path, int]:
    """The format's data file under ``root``, generated unless a kept one is there."""
    fmt = FORMATS[name]
    path = root / f"data-{mb}mb.{fmt.extension}"
    marker = root / f".{path.name}.rows"
    if marker.exists():
        return path, int(marker.read_text())
    start = time.perf_counter()
    rows = fmt.generate(path, mb * 1024 * 1024)
    marker.write_text(str(rows))
    size = path.stat().st_size / 2**20
    print(f"  generated {path.name}: {rows:,} rows, {size:.0f} MB in "
          f"{time.perf_counter() - start:.0f}s")  # fmt: skip
    return path, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--mb", type=int, default=200, help="data to generate per format (MB)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per case, the best counts")
    ap.add_argument("--batch-rows", type=int, default=4096)
    ap.add_argument("--formats", default=",".join(FORMATS), help="formats to time")
    ap.add_argument("--keep", help="generate into (or reuse) this directory")
    ap.add_argument("--one", nargs=3, metavar=("CASE", "FORMAT", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        case, name, path = args.one
        print(json.dumps(run_case(case, name, Path(path), args.batch_rows)))
        return
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="auger-plugbench-"))
    root.mkdir(parents=True, exist_ok=True)
    wanted = [n.strip() for n in args.formats.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in FORMATS]
    if unknown:
        ap.error(f"unknown formats {unknown}; known: {', '.join(FORMATS)}")
    print(f"rows/s are per core (rows over CPU seconds), best of {args.repeat}; data in {root}")
    header = (
        f"{'format':9s} {'rows':>10s} {'MB':>5s} {'cols':>4s} {'raw rows/s':>11s}"
        f" {'auger rows/s':>12s} {'auger/raw':>9s} {'2/20 rows/s':>11s} {'2/20 up':>7s}"
    )
    lines = [header]
    for name in wanted:
        why = missing(name)
        if why:
            lines.append(f"{name:9s} {why}")
            continue
        path, _ = _data(root, name, args.mb)
        raw = _best("raw", name, path, args)
        full = _best("all", name, path, args)
        two = _best("two", name, path, args)
        if not raw["rows"] == full["rows"] == two["rows"]:
            print(f"  {name}: row counts differ: raw {raw['rows']}, all {full['rows']}, "
                  f"2/20 {two['rows']}")  # fmt: skip
        rate = {k: r["rows"] / max(r["cpu"], 1e-9) for k, r in (("raw", raw), ("all", full),
                                                                ("two", two))}  # fmt: skip
        lines.append(
            f"{name:9s} {full['rows']:10,d} {path.stat().st_size / 2**20:5.0f}"
            f" {full['columns']:4d} {rate['raw']:11,.0f} {rate['all']:12,.0f}"
            f" {rate['all'] / rate['raw']:8.2f}x {rate['two']:11,.0f}"
            f" {rate['two'] / rate['all']:6.1f}x"
        )
        print(lines[-1])
    print()
    print("\n".join(lines))
    if not args.keep:
        for p in root.iterdir():
            p.unlink()
        root.rmdir()


if __name__ == "__main__":
    main()
