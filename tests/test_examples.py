"""The plugin example (examples/regex_log_reader.py): registered as a format and queried through
the scan operator, it gets projection, implicit and partition columns, missing columns, batch
limits and LIMIT without a line of its own for any of them."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats import get_format, register_format, registry, unregister_format
from auger.scan import ScanOperator, run_scan
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.types.schema_text import parse_schema

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "regex_log_reader.py"

LOG_A = """\
2024-01-01 10:00:00 INFO service started
this line does not match
2024-01-01 10:00:05 WARN disk at 91%
2024-01-01 10:01:00 ERROR request failed: timeout
"""
LOG_B = """\
2024-01-02 08:00:00 INFO nightly job
2024-01-02 08:30:00 INFO nightly job done
"""


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("regex_log_reader", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["regex_log_reader"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def example() -> Iterator[ModuleType]:
    module = load_example()
    register_format("regexlog", module.RegexLogFormat)
    try:
        yield module
    finally:
        unregister_format("regexlog")


@pytest.fixture
def logs(tmp_path: Path) -> list[Path]:
    (tmp_path / "2024" / "jan").mkdir(parents=True)
    a = tmp_path / "2024" / "a.log"
    b = tmp_path / "2024" / "jan" / "b.log"
    a.write_text(LOG_A)
    b.write_text(LOG_B)
    return [a, b]


def spec_for(
    root: Path, files: list[Path], columns: dict[str, str], limit: int | None = None
) -> ScanSpec:
    """A spec as the planner would build it: column name → source (``table``, ``filename``...)."""
    schema = parse_schema(
        ", ".join(
            f"`{n}` {'INT' if src == ColumnSource.MISSING else 'VARCHAR'}"
            for n, src in columns.items()
        )
    )
    return ScanSpec(
        format_name="logs",
        format_type="regexlog",
        format_options={},
        selection_root=str(root),
        files=tuple(FileSplit(str(f)) for f in files),
        output_schema=schema.to_text(),
        sources=columns,
        projection=tuple(columns),
        limit=limit,
        table="logs",
    )


def rows(batches: list[pa.RecordBatch]) -> list[dict[str, Any]]:
    return [r for b in batches for r in b.to_pylist()]


def test_example_is_short() -> None:
    assert len(EXAMPLE.read_text().splitlines()) < 80


def test_discovered_schema_is_the_named_groups(example: ModuleType, logs: list[Path]) -> None:
    plugin = get_format("regexlog")
    schema = plugin.discover_schema([str(p) for p in logs], FormatConfig("l", "regexlog", ()), {})
    assert schema == parse_schema("date VARCHAR, time VARCHAR, level VARCHAR, message VARCHAR")


def test_query_through_run_scan(example: ModuleType, tmp_path: Path, logs: list[Path]) -> None:
    columns = {
        "level": ColumnSource.TABLE,
        "filename": ColumnSource.FILENAME,
        "dir1": "dir1",
        "message": ColumnSource.TABLE,
        "nope": ColumnSource.MISSING,
    }
    spec = spec_for(tmp_path, logs, columns)
    out = rows(list(run_scan(spec)))
    assert out == [
        {
            "level": "INFO",
            "filename": "a.log",
            "dir1": None,
            "message": "service started",
            "nope": None,
        },
        {
            "level": "WARN",
            "filename": "a.log",
            "dir1": None,
            "message": "disk at 91%",
            "nope": None,
        },
        {
            "level": "ERROR",
            "filename": "a.log",
            "dir1": None,
            "message": "request failed: timeout",
            "nope": None,
        },
        {
            "level": "INFO",
            "filename": "b.log",
            "dir1": "jan",
            "message": "nightly job",
            "nope": None,
        },
        {
            "level": "INFO",
            "filename": "b.log",
            "dir1": "jan",
            "message": "nightly job done",
            "nope": None,
        },
    ]
    # The operator over the reader itself (its own lifecycle, no planned schema) agrees.
    op = ScanOperator(
        get_format("regexlog"),
        logs,
        ["level", "filename", "dir1", "message", "nope"],
        selection_root=str(tmp_path),
    )
    assert rows(list(op)) == out


def test_batch_limits_and_limit(example: ModuleType, tmp_path: Path, logs: list[Path]) -> None:
    spec = spec_for(tmp_path, logs, {"date": ColumnSource.TABLE}, limit=4)
    batches = list(run_scan(spec, batch_rows=2))
    assert [b.num_rows for b in batches] == [2, 1, 1]  # file a has 3 matches, then b's first
    assert [r["date"] for r in rows(batches)] == ["2024-01-01"] * 3 + ["2024-01-02"]


def test_wildcard_with_partitions_through_the_operator(
    example: ModuleType, tmp_path: Path, logs: list[Path]
) -> None:
    op = ScanOperator(get_format("regexlog"), logs, ["*", "suffix"], selection_root=str(tmp_path))
    batches = list(op)
    assert batches[0].schema.names == ["date", "time", "level", "message", "dir0", "dir1", "suffix"]
    assert [(r["dir0"], r["dir1"]) for r in rows(batches)] == [("2024", None)] * 3 + [
        ("2024", "jan")
    ] * 2


def test_only_projected_groups_are_extracted(example: ModuleType, logs: list[Path]) -> None:
    readers: list[Any] = []
    plugin = example.RegexLogFormat()

    def source(split: FileSplit) -> Any:
        readers.append(plugin.reader(split, FormatConfig("l", "regexlog", ())))
        return readers[-1]

    out = rows(list(ScanOperator(source, logs[:1], ["level"])))
    assert [r["level"] for r in out] == ["INFO", "WARN", "ERROR"]
    assert readers[0].wanted == [False, False, True, False]
    assert readers[0].unmatched == 1


def test_custom_pattern_from_the_format_config(example: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "access.log"
    path.write_text('1.2.3.4 "GET /a" 200\n5.6.7.8 "POST /b" 500\n')
    config = FormatConfig(
        "access", "regexlog", ("log",), {"pattern": r'(?P<ip>\S+) "(?P<req>[^"]*)" (?P<status>\d+)'}
    )
    provided = SimpleNamespace(schema=parse_schema("status INT"), properties={})
    op = ScanOperator(
        get_format("regexlog"), [path], ["ip", "status"], config=config, provided_schema=provided
    )
    assert rows(list(op)) == [{"ip": "1.2.3.4", "status": 200}, {"ip": "5.6.7.8", "status": 500}]


def test_unreadable_file_names_file_and_pattern(example: ModuleType, tmp_path: Path) -> None:
    missing = tmp_path / "gone.log"
    with pytest.raises(UserError) as info:
        list(ScanOperator(get_format("regexlog"), [missing], ["*"]))
    assert f"File: {missing}" in info.value.context
    assert any(c.startswith("Pattern: ") for c in info.value.context)


def test_registered_as_an_entry_point(monkeypatch: pytest.MonkeyPatch, logs: list[Path]) -> None:
    """docs/plugins.md: a package that declares the plugin under ``auger.formats`` is found."""
    module = load_example()
    ep = SimpleNamespace(name="regexlog", load=lambda: module.RegexLogFormat)
    monkeypatch.setattr(registry, "_registered", {})
    monkeypatch.setattr(registry, "_instances", {})
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    monkeypatch.setattr(registry, "_from_entry_points", set())
    monkeypatch.setattr(
        registry, "entry_points", lambda group: [ep] if group == "auger.formats" else []
    )
    assert "regexlog" in registry.known_formats()
    out = rows(list(ScanOperator(get_format("regexlog"), logs[1:], ["message"])))
    assert [r["message"] for r in out] == ["nightly job", "nightly job done"]
