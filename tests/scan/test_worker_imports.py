"""A Spark worker that scans raw files, or builds their cache entries, never imports pandas.

pyarrow imports pandas on its first conversion of a Python value; a worker that did so would
carry 35-40 MB more for its life. Each case runs in a fresh interpreter, as a worker starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Plans a ``SELECT *`` of the files (as the planner does for a cache build), then scans them
#: writing their cache parts, and prints what was imported and written.
_BUILD = """
import json, sys
from dataclasses import replace
from pathlib import Path
from tests.scan.test_run_scan import plan
from auger.scan.cache_build import building_scan
from auger.types.spark import schema_to_spark, spark_arrow_schema

fmt, root, cache = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
files = sorted(p for p in root.iterdir() if p.is_file())
spec = plan(fmt, root, files, None)
spec = replace(spec, cache_columns=spec.output_schema, cache_build=cache)
before = "pandas" in sys.modules
target = spark_arrow_schema(schema_to_spark(spec.schema()))
rows = sum(b.num_rows for b in building_scan(spec, list(spec.files), 4096, target))
print(json.dumps({
    "before": before,
    "after": "pandas" in sys.modules,
    "rows": rows,
    "parts": len(list(Path(cache).rglob("*.parquet"))),
}))
"""


def _fresh(script: str, *args: str) -> dict[str, Any]:
    """What ``script`` printed last (JSON), run with ``args`` in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    got: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return got


def _write(fmt: str, root: Path) -> int:
    """Files whose build takes every branch of a part's writing: positions past some rows'
    ends, NULL rows, typed copies, few values and ranges, maps and lists. Returns the rows."""
    rows = 3000
    if fmt == "csv":
        lines = [f"{i},n{i},{i % 7}.5,c{i % 3},{i % 50}" + (",x" * (i % 3)) for i in range(rows)]
        (root / "a.csv").write_text("\n".join(lines) + "\n")
    elif fmt == "csvh":
        lines = ["id,name,amount,category,when"]
        lines += [f"{i},n{i},{i % 7}.5,c{i % 3},2024-01-{1 + i % 28:02d}" for i in range(rows)]
        (root / "a.csvh").write_text("\n".join(lines) + "\n")
    else:
        records = [
            {
                "id": i,
                "name": f"n{i}",
                "amount": i / 4,
                "m": {"qty": i % 9, "tags": [f"t{i % 4}"], "inner": {"k": i % 2}},
                "list": [*range(i % 4), None] if i % 5 == 0 else list(range(i % 4)),
            }
            if i % 10
            else {"id": i, "m": None}
            for i in range(rows)
        ]
        (root / "a.json").write_text("".join(json.dumps(r) + "\n" for r in records))
    return rows


@pytest.mark.parametrize("fmt", ["csv", "csvh", "json"])
def test_a_cache_build_imports_no_pandas(fmt: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    rows = _write(fmt, data)
    got = _fresh(_BUILD, fmt, str(data), str(tmp_path / "cache"))
    assert got == {"before": False, "after": False, "rows": rows, "parts": 1}


#: A query's scan of files in subdirectories: table, implicit, partition and missing columns.
_SCAN = """
import json, sys
from pathlib import Path
from tests.scan.test_run_scan import plan
from auger.scan import run_scan

fmt, root = sys.argv[1], Path(sys.argv[2])
files = sorted(p for p in root.rglob("*") if p.is_file())
spec = plan(fmt, root, files, json.loads(sys.argv[3]))
before = "pandas" in sys.modules
batches = list(run_scan(spec, batch_rows=1000))
print(json.dumps({
    "before": before,
    "after": "pandas" in sys.modules,
    "rows": sum(b.num_rows for b in batches),
    "dirs": sorted({str(v) for b in batches for v in b.column("dir0").to_pylist()}),
}))
"""


@pytest.mark.parametrize(
    ("fmt", "columns"),
    [
        ("csv", ["columns", "filename", "fqn", "dir0", "suffix"]),
        ("csvh", ["id", "filename", "filepath", "dir0", "nope"]),
        ("json", ["id", "m", "list", "filename", "dir0", "nope"]),
    ],
)
def test_a_scan_with_implicit_and_missing_columns_imports_no_pandas(
    fmt: str, columns: list[str], tmp_path: Path
) -> None:
    rows = 0
    for sub in ("y2024", "y2025"):
        (tmp_path / sub).mkdir()
        rows += _write(fmt, tmp_path / sub)
    got = _fresh(_SCAN, fmt, str(tmp_path), json.dumps(columns))
    assert got == {"before": False, "after": False, "rows": rows, "dirs": ["y2024", "y2025"]}


#: A provided schema's conversions of text: numbers with blanks and defaults, BOOLEAN, and a
#: NOT NULL VARCHAR with a default.
_CONVERT = """
import json, struct, sys
import pyarrow as pa
from auger.scan.conflicts import ErrorContext
from auger.scan.provided import text_converter
from auger.types.arrow import field_to_arrow
from auger.types.schema_text import parse_schema

before = "pandas" in sys.modules
schema = parse_schema(
    "(`n` INT NOT NULL DEFAULT '7', `b` BOOLEAN, `s` VARCHAR NOT NULL DEFAULT 'x', `i` INT)"
)
offsets = struct.pack("<5i", 0, 1, 1, 2, 3)  # "1", "", " ", "0"
text = pa.Array.from_buffers(pa.string(), 4, [None, pa.py_buffer(offsets), pa.py_buffer(b"1 0")])
out = {}
for col in schema:
    convert = text_converter(col, field_to_arrow(col).type)
    out[col.name] = convert(text, ErrorContext("File: a.csv")).to_pylist()
print(json.dumps({"before": before, "after": "pandas" in sys.modules, "out": out}))
"""


def test_provided_schema_conversions_import_no_pandas() -> None:
    got = _fresh(_CONVERT)
    assert got == {
        "before": False,
        "after": False,
        "out": {
            "n": [1, 7, 7, 0],  # blanks take the default
            "b": [True, None, None, False],
            "s": ["1", "", " ", "0"],
            "i": [1, None, None, 0],
        },
    }
