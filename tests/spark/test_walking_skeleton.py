"""End to end through the DB-API: SQL over files, run by Spark through the auger data source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.dbapi import DataError, ProgrammingError


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return conn.cursor().execute(sql).fetchall()


def test_cp_employee_limit(conn: Any) -> None:
    cur = conn.cursor().execute("SELECT full_name FROM cp.`employee.json` LIMIT 3")
    assert [d[0] for d in cur.description] == ["full_name"]
    assert cur.fetchall() == [("Sheri Nowmer",), ("Derrick Whelply",), ("Michael Spence",)]


def test_headerless_csv_gives_columns_array(conn: Any, data_dir: Path) -> None:
    (data_dir / "plays.csv").write_text("1599,As You Like It\n1601,Twelfth Night\n")
    assert rows(conn, f"SELECT columns FROM dfs.`{data_dir}/plays.csv`") == [
        (["1599", "As You Like It"],),
        (["1601", "Twelfth Night"],),
    ]
    cur = conn.cursor().execute("SELECT columns[1], columns[0] FROM dfs.data.`plays.csv`")
    assert [d[0] for d in cur.description] == ["EXPR$0", "EXPR$1"]
    assert cur.fetchall() == [("As You Like It", "1599"), ("Twelfth Night", "1601")]


def test_index_past_the_end_is_null(conn: Any, data_dir: Path) -> None:
    (data_dir / "ragged.csv").write_text("a,b,c\nd\n")
    assert rows(conn, "SELECT columns[2] AS c FROM dfs.data.`ragged.csv`") == [("c",), (None,)]


def test_json_directory_with_dirs_and_implicit_columns(conn: Any, data_dir: Path) -> None:
    for year, n in (("2023", 2), ("2024", 3)):
        d = data_dir / "logs" / year
        d.mkdir(parents=True)
        (d / "part.json").write_text(
            "\n".join(json.dumps({"id": i, "m": {"a": f"v{i}"}}) for i in range(n))
        )
    got = rows(
        conn,
        "SELECT dir0, filename, COUNT(*) AS n, MAX(t.m.a) AS top FROM dfs.data.`logs` t "
        "GROUP BY dir0, filename ORDER BY dir0",
    )
    assert got == [("2023", "part.json", 2, "v1"), ("2024", "part.json", 3, "v2")]
    star = conn.cursor().execute("SELECT * FROM dfs.data.`logs` ORDER BY dir0, id")
    assert [d[0] for d in star.description] == ["id", "m", "dir0"]
    assert star.fetchone() == (0, {"a": "v0"}, "2023")


def test_parquet_and_missing_columns_are_null(conn: Any, data_dir: Path) -> None:
    pq.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), data_dir / "t.parquet")
    cur = conn.cursor().execute("SELECT a, nosuch FROM dfs.data.`t.parquet` ORDER BY a")
    assert cur.fetchall() == [(1, None), (2, None)]
    assert cur.description[1][1] == "INTEGER"


def test_fetch_arrow_table(conn: Any) -> None:
    table = conn.cursor().execute("SELECT n_name FROM cp.`tpch/nation.parquet`").fetch_arrow_table()
    assert isinstance(table, pa.Table) and table.num_rows == 25


def test_qmark_parameters_are_literals(conn: Any) -> None:
    cur = conn.cursor().execute(
        "SELECT n_name FROM cp.`tpch/nation.parquet` WHERE n_name = ? OR n_regionkey = ?",
        ("x' OR 'a'='a", -1),
    )
    assert cur.fetchall() == []


def test_options_and_sys_tables(conn: Any) -> None:
    assert rows(conn, "ALTER SESSION SET `store.format` = 'json'") == [
        (True, "store.format updated.")
    ]
    got = rows(conn, "SELECT string_val, optionScope FROM sys.options WHERE name = 'store.format'")
    assert got == [("json", "SESSION")]
    assert rows(conn, "ALTER SESSION RESET `store.format`") == [(True, "store.format updated.")]
    got = rows(conn, "SELECT string_val FROM sys.options WHERE name = 'store.format'")
    assert got == [("parquet",)]
    assert rows(conn, "SELECT version FROM sys.version")[0][0] >= "1.19"
    assert rows(conn, "SELECT state FROM sys.drillbits") == [("ONLINE",)]


def test_use_changes_default_schema(conn: Any, data_dir: Path) -> None:
    (data_dir / "u.csv").write_text("1\n")
    assert rows(conn, "USE dfs.data") == [(True, "Default schema changed to [dfs.data]")]
    assert rows(conn, "SELECT columns[0] AS c FROM `u.csv`") == [("1",)]


def test_sessions_are_independent(make_conn: Any) -> None:
    a, b = make_conn(), make_conn()
    rows(a, "ALTER SESSION SET `store.format` = 'csv'")
    assert rows(b, "SELECT string_val FROM sys.options WHERE name = 'store.format'") == [
        ("parquet",)
    ]


@pytest.mark.parametrize(
    ("sql", "start", "needle"),
    [
        ("SELEC x FROM y", "PARSE ERROR", ""),
        (
            "SELECT * FROM cp.`nope.json`",
            "VALIDATION ERROR",
            "Object 'nope.json' not found within 'cp'",
        ),
        ("SELECT * FROM nosuch.thing", "VALIDATION ERROR", "nosuch"),
    ],
)
def test_errors_have_drill_kinds(conn: Any, sql: str, start: str, needle: str) -> None:
    with pytest.raises(ProgrammingError) as info:
        conn.cursor().execute(sql)
    assert str(info.value).startswith(start)
    assert needle in str(info.value)


def test_bad_json_is_a_data_read_error_naming_the_file(conn: Any, data_dir: Path) -> None:
    bad = data_dir / "bad.json"
    bad.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(DataError) as info:
        conn.cursor().execute("SELECT a FROM dfs.data.`bad.json`").fetchall()
    assert str(info.value).startswith("DATA_READ ERROR")
    assert str(bad) in str(info.value)
