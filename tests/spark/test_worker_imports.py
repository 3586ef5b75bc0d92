"""What Spark's Python workers import for a scan through the ``auger`` data source.

Spark runs the data source's planning (``schema()``, ``reader()``, ``partitions()``) and each
task in Python processes of its own, which import ``auger.spark.datasource`` when they unpickle
it, and a process that Spark starts afresh pays for every module again. These tests run that
work in a clean interpreter and check that the DB-API, the SQL layer, every installed format
plugin and pandas stay out of it. They count modules, not seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: Never needed to scan files: the engine and SQL layers, the other format plugins, pandas.
_NEVER = (
    "auger.dbapi",
    "auger.engine",
    "auger.session",
    "auger.sql",
    "auger.server",
    "auger.cli",
    "auger.plugins",
    "pandas",
)

#: The scan engine proper: a data source unpickled for planning does not need it yet.
_ENGINE = ("auger.scan.operator", "auger.scan.file_scan", "auger.scan.run", "pyarrow.compute")


def _imported(code: str) -> list[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def _under(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


def test_the_worker_entry_module_imports_neither_engine_nor_dbapi() -> None:
    modules = _imported("import auger.spark.datasource")
    assert "auger.spark.datasource" in modules
    assert _under(modules, _NEVER + _ENGINE) == []


def test_the_package_loads_the_dbapi_names_on_first_use() -> None:
    modules = _imported("import auger")
    assert _under(modules, ("auger.dbapi", "auger.spark")) == []
    modules = _imported(
        "from auger import ProgrammingError, apilevel\nimport auger.dbapi as d\n"
        "assert ProgrammingError is d.ProgrammingError and apilevel == '2.0'"
    )
    assert "auger.dbapi" in modules


def test_any_scan_import_installs_the_reader_derived_discovery() -> None:
    # a plugin written as a reader imports FormatReader, and with it gets discover_schema
    modules = _imported(
        "from auger.scan import FormatReader\n"
        "from auger.formats import base\n"
        "assert base._reader_discovery is not None"
    )
    assert "auger.scan.lifecycle" in modules


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_a_task_imports_only_its_own_reader(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"t.{fmt}"
    if fmt == "json":
        # some arrays null: the reader makes them empty, as Drill's vectors hold them
        rows = ({"id": i, "name": f"n{i}", "tags": [i] if i % 2 else None} for i in range(50))
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        options = {"path": str(path), "format": "json"}
    else:
        path.write_text("id,name\n" + "".join(f"{i},n{i}\n" for i in range(50)))
        options = {"path": str(path), "format": "csv", "extract_header": "true"}
    # plan in this process as the driver does, then run the task in a fresh one as Spark does
    from auger.spark.datasource import AugerDataSource
    from auger.spark.direct import plan_direct_read

    spec = plan_direct_read(options)
    source = AugerDataSource({"spec": spec.to_json()})
    reader = source.reader(source.schema())
    blob = tmp_path / "task.pickle"
    import pickle

    blob.write_bytes(pickle.dumps((reader, reader.partitions()[0])))
    modules = _imported(
        "import pickle\n"
        f"reader, part = pickle.loads(open({str(blob)!r}, 'rb').read())\n"
        "rows = sum(b.num_rows for b in reader.read(part))\n"
        "assert rows == 50, rows"
    )
    assert "auger.scan.run" in modules  # the scan did run
    assert _under(modules, _NEVER) == []
    assert "auger.spark.errors" not in modules  # a task that succeeds translates no error
    other = "auger.formats.text" if fmt == "json" else "auger.formats.json"
    assert _under(modules, (other,)) == []


@pytest.mark.parametrize("layout", ["lines", "array"])
def test_planning_a_json_read_imports_no_pandas_nor_config_machinery(
    tmp_path: Path, layout: str
) -> None:
    # Spark's planner worker for spark.read.format("auger").load(path): it discovers the
    # JSON schema from a sample; pyarrow's conversion of Python objects would import pandas
    records = [{"id": i, "x": i / 2, "tags": ["a"], "m": {"k": None}} for i in range(40)]
    records.append({"id": 41, "when": "2024-01-02 03:04:05", "m": {"k": 7}})
    path = tmp_path / "t.json"
    if layout == "lines":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:  # an array of objects: read by the record stream, not line by line
        path.write_text(json.dumps(records, indent=1))
    modules = _imported(
        "from auger.spark.datasource import AugerDataSource\n"
        f"source = AugerDataSource({{'path': {str(path)!r}}})\n"
        "got = source.schema().simpleString()\n"
        "want = ('struct<id:bigint,x:double,tags:array<string>,m:struct<k:bigint>,'\n"
        "        'when:string>')\n"
        "assert got == want, got\n"
    )
    assert "auger.formats.json.infer" in modules  # the sample was typed here
    assert _under(modules, _NEVER) == []
    # a config file and installed plugins are never looked at for a built-in format
    assert _under(modules, ("tomllib", "importlib.metadata")) == []
