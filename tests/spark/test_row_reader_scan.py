"""A row reader (the regex log example) runs inside the one scan operator, through SQL too:
missing columns follow the same rule as a built-in Arrow reader's, its rows go through the
result set loader (a row that passes the byte limit arrives whole in the next batch), and the
scan adds its implicit and partition columns."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow as pa
import pytest

from auger.formats import get_format, register_format, unregister_format
from auger.scan import ScanOperator, run_scan
from auger.scan.missing import missing_column_array
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.types.schema_text import parse_schema

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "regex_log_reader.py"

#: Columns the files lack, typed and defaulted by a provided schema.
PROVIDED = (
    "level VARCHAR, tag VARCHAR NOT NULL DEFAULT 'x', n INT NOT NULL DEFAULT '7', z DOUBLE, "
    "w INT ARRAY"
)


@pytest.fixture
def regexlog() -> Iterator[ModuleType]:
    # Loaded by path under a name Spark's workers cannot import: the registry ships the plugin.
    spec = importlib.util.spec_from_file_location("regex_log_reader_scan_test", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["regex_log_reader_scan_test"] = module
    spec.loader.exec_module(module)
    register_format("regexlog", module.RegexLogFormat)
    try:
        yield module
    finally:
        unregister_format("regexlog")
        sys.modules.pop("regex_log_reader_scan_test", None)


def log_line(level: str, message: str) -> str:
    return f"2024-01-01 10:00:00 {level} {message}\n"


def fetch(conn: Any, sql: str) -> tuple[list[tuple[Any, ...]], list[tuple[str, Any]]]:
    """The rows and each column's (name, type code)."""
    cur = conn.cursor()
    cur.execute(sql)
    rows = cur.fetchall()
    return rows, [(d[0], d[1]) for d in cur.description]


def test_missing_columns_follow_one_rule_in_sql_and_plugin_scans(
    conn: Any, regexlog: ModuleType, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text(log_line("INFO", "up") + log_line("WARN", "hot"))
    jsons = tmp_path / "jsons"
    jsons.mkdir()
    (jsons / "a.json").write_text('{"level": "INFO"}\n{"level": "WARN"}\n')
    schema = f"schema => 'inline=({PROVIDED.replace(chr(39), chr(39) * 2)})'"
    select = "SELECT level, tag, n, z, w FROM table(dfs.`{}`(type => '{}', {}))"
    by_plugin = fetch(conn, select.format(logs, "regexlog", schema))
    by_json = fetch(conn, select.format(jsons, "json", schema))
    # Values and types: the provided defaults for NOT NULL columns, NULL for the nullable one,
    # an empty array for an array.
    want = [("INFO", "x", 7, None, []), ("WARN", "x", 7, None, [])]
    assert sorted(by_plugin[0]) == want
    assert by_json == by_plugin
    # The plugin under the scan operator without a planned schema: the same rule.
    op = ScanOperator(
        get_format("regexlog"),
        [str(logs / "a.log")],
        ["level", "tag", "n", "z", "w"],
        provided_schema=parse_schema(PROVIDED),
    )
    table = pa.Table.from_batches(list(op))
    assert [tuple(r.values()) for r in table.to_pylist()] == want
    # ... and the rule itself, column by column.
    for col in parse_schema(PROVIDED).columns()[1:]:
        assert table.column(col.name).to_pylist() == missing_column_array(col, 2).to_pylist()


def big_log(folder: Path) -> list[str]:
    """Four 300 KB messages, a 1 MB one, then two short ones."""
    messages = [c * 300_000 for c in "abcd"] + ["E" * 1_000_000, "f", "g"]
    folder.mkdir(parents=True)
    (folder / "big.log").write_text("".join(log_line("INFO", m) for m in messages))
    return messages


def test_a_row_past_the_byte_limit_arrives_whole_in_the_next_batch(tmp_path: Path) -> None:
    module_spec = importlib.util.spec_from_file_location("regex_log_reader_overflow", EXAMPLE)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    register_format("regexlog", module.RegexLogFormat)
    try:
        messages = big_log(tmp_path / "logs")
        spec = ScanSpec(
            format_name="logs",
            format_type="regexlog",
            format_options={},
            selection_root=str(tmp_path),
            files=(FileSplit(str(tmp_path / "logs" / "big.log")),),
            output_schema=parse_schema("message VARCHAR, dir0 VARCHAR").to_text(),
            sources={"message": ColumnSource.TABLE, "dir0": "dir0"},
            projection=("message", "dir0"),
            options={"auger.scan.batch_bytes": 1_500_000},
            table="logs",
        )
        batches = list(run_scan(spec))
    finally:
        unregister_format("regexlog")
    # 4 x 300 KB fit under 1.5 MB; the 1 MB row does not, so it starts the second batch.
    assert [b.num_rows for b in batches] == [4, 3]
    assert batches[1].column(0)[0].as_py() == "E" * 1_000_000
    assert [r["message"] for b in batches for r in b.to_pylist()] == messages
    assert {r["dir0"] for b in batches for r in b.to_pylist()} == {"logs"}


def test_overflow_through_sql(conn: Any, regexlog: ModuleType, tmp_path: Path) -> None:
    messages = big_log(tmp_path / "logs")
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.scan.local_limit_rows` = 0")
    cur.execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")
    cur.execute("ALTER SESSION SET `auger.scan.batch_bytes` = 1500000")
    sql = (
        f"SELECT message, filename, dir0 FROM table(dfs.`{tmp_path}`(type => 'regexlog')) "
        "ORDER BY LENGTH(message) DESC, message"
    )
    rows, _ = fetch(conn, sql)
    want = sorted(messages, key=lambda m: (-len(m), m))
    assert [r[0] for r in rows] == want  # every row whole, none lost or cut
    assert {(r[1], r[2]) for r in rows} == {("big.log", "logs")}
    # The limit reaches the executors: a value alone past it is Drill's resource error.
    cur.execute("ALTER SESSION SET `auger.scan.batch_bytes` = 500000")
    with pytest.raises(Exception, match="RESOURCE ERROR") as info:
        fetch(conn, sql)
    assert "larger than the maximum allowed size" in str(info.value)


def test_plugin_implicit_columns_through_sql(
    conn: Any, regexlog: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "2024" / "jan").mkdir(parents=True)
    (tmp_path / "2024" / "jan" / "b.log").write_text(log_line("INFO", "one"))
    (tmp_path / "top.log").write_text(log_line("WARN", "two") + "no match\n")
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.scan.local_limit_rows` = 0")
    cur.execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")
    rows, described = fetch(
        conn,
        f"SELECT level, filename, suffix, fqn, filepath, dir0, dir1 "
        f"FROM table(dfs.`{tmp_path}`(type => 'regexlog')) ORDER BY level",
    )
    names = [name for name, _ in described]
    assert names == ["level", "filename", "suffix", "fqn", "filepath", "dir0", "dir1"]
    sub = tmp_path / "2024" / "jan"
    assert rows == [
        ("INFO", "b.log", "log", str(sub / "b.log"), str(sub), "2024", "jan"),
        ("WARN", "top.log", "log", str(tmp_path / "top.log"), str(tmp_path), None, None),
    ]
