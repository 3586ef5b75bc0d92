"""Format errors carry Drill's context lines beside the message: the format plugin and its
config name, then the file, line and column, as Drill's file scans print them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auger.config import FormatConfig
from auger.formats.registry import get_format


def error(conn: Any, sql: str) -> str:
    with pytest.raises(Exception) as info:
        conn.cursor().execute(sql).fetchall()
    return str(info.value)


def test_each_format_names_itself_as_drill_does() -> None:
    def lines(kind: str, name: str) -> list[str]:
        return get_format(kind).error_context(FormatConfig(name, kind, ()))

    assert lines("text", "csv") == ["Format plugin type: text", "Plugin config name: csv"]
    assert lines("json", "json") == ["Format plugin: json", "Plugin config name: json"]
    assert lines("parquet", "parquet") == []


def test_a_json_syntax_error_names_format_file_line_and_column(conn: Any, tmp_path: Path) -> None:
    rows = "".join(f'{{"a": {i}}}\n' for i in range(3))
    (tmp_path / "bad.json").write_text(rows + '{"a": 4, "b": "x\\qy"}\n')
    msg = error(conn, f"SELECT a FROM dfs.`{tmp_path}/bad.json`")
    head, _, context = msg.partition("\n\n")
    assert (
        head == "DATA_READ ERROR: Error parsing JSON - Unrecognized character escape 'q' (code 113)"
    )
    lines = context.split("\n")
    for line in (
        "Format plugin: json",
        "Plugin config name: json",
        f"File: {tmp_path}/bad.json",
        "Line: 4",
        "Column: 18",
    ):
        assert line in lines, (line, lines)


def test_a_csv_error_names_format_and_config(conn: Any, tmp_path: Path) -> None:
    (tmp_path / "h.csvh").write_text("a,b\n1,2\n")
    msg = error(conn, f"SELECT columns[0] FROM dfs.`{tmp_path}/h.csvh`")
    assert "Format plugin type: text" in msg and "Plugin config name: csvh" in msg
    (tmp_path / "q.csv").write_text('1,"open\n2,3\n')
    msg = error(conn, f"SELECT * FROM dfs.`{tmp_path}/q.csv`")
    assert msg.startswith("DATA_READ ERROR:"), msg
    assert "Format plugin type: text" in msg and "Plugin config name: csv" in msg
    assert f"{tmp_path}/q.csv" in msg and "Line: " in msg
