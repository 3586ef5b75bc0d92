"""SHOW TABLES / SHOW FILES / DESCRIBE / INFORMATION_SCHEMA / REFRESH / EXPLAIN."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .helpers import error, names, rows


def test_show_tables_files_and_information_schema(conn: Any, data_dir: Path) -> None:
    d = data_dir / "meta"
    d.mkdir()
    (d / "b.json").write_text('{"a": 1}\n')
    (d / "sub").mkdir()
    (d / "sub" / "x.csv").write_text("1\n")
    (d / "_hidden.json").write_text("{}\n")
    (d / "notes.xyz").write_text("?")
    assert "No default schema selected. Select a schema using 'USE schema' command" in error(
        conn, "SHOW TABLES"
    )
    assert "Invalid schema name [nosuch.ws]" in error(conn, "SHOW TABLES IN nosuch.ws")
    rows(conn, "CREATE VIEW dfs.tmp.meta_view AS SELECT 1 AS one FROM (VALUES(1))")
    assert names(conn, "SHOW TABLES IN dfs.tmp") == ["TABLE_SCHEMA", "TABLE_NAME"]
    assert rows(conn, "SHOW TABLES IN dfs.tmp LIKE 'META%'") == [("dfs.tmp", "meta_view")]
    got = rows(
        conn,
        "SELECT TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE "
        "FROM INFORMATION_SCHEMA.`TABLES` WHERE TABLE_NAME = 'meta_view'",
    )
    assert got == [("DRILL", "dfs.tmp", "meta_view", "VIEW")]
    got = rows(conn, "SELECT * FROM INFORMATION_SCHEMA.VIEWS WHERE TABLE_NAME = 'meta_view'")
    assert got[0][:3] == ("DRILL", "dfs.tmp", "meta_view")
    assert got[0][3].startswith("SELECT 1 AS `one`")
    got = rows(
        conn,
        "SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE FROM INFORMATION_SCHEMA.`COLUMNS` "
        "WHERE TABLE_NAME = 'meta_view'",
    )
    assert got == [("one", "INTEGER", "NO")]  # a literal is NOT NULL, as in Calcite

    rows(conn, "USE dfs.data")
    assert rows(conn, "SHOW TABLES LIKE 'meta'") == [("dfs.data", "meta")]
    cur = conn.cursor().execute("SHOW FILES IN dfs.data.meta")
    assert [c[0] for c in cur.description] == [
        "name", "isDirectory", "isFile", "length", "owner", "group", "permissions",
        "accessTime", "modificationTime",
    ]  # fmt: skip
    listing = {r[0]: r[1:4] for r in cur.fetchall()}
    assert listing["b.json"] == (False, True, 9)
    assert listing["sub"][0] is True
    assert "_hidden.json" not in listing
    assert [r[0] for r in rows(conn, "SHOW FILES FROM `meta`.`sub`")] == ["x.csv"]
    assert "Invalid FROM/IN clause [dfs.data.nope]" in error(conn, "SHOW FILES IN dfs.data.nope")
    assert "SHOW FILES is supported in workspace type schema only. Schema [sys] is not" in error(
        conn, "SHOW FILES IN sys"
    )
    rows(conn, "DROP VIEW dfs.tmp.meta_view")


def test_describe_and_schemata(conn: Any, data_dir: Path) -> None:
    (data_dir / "desc.json").write_text('{"id": 1, "name": "x", "m": {"a": 1}, "l": [1]}\n')
    assert names(conn, "DESCRIBE dfs.data.`desc.json`") == [
        "COLUMN_NAME", "DATA_TYPE", "IS_NULLABLE"
    ]  # fmt: skip
    got = rows(conn, "DESCRIBE dfs.data.`desc.json`")
    assert [r[:2] for r in got] == [
        ("id", "BIGINT"), ("name", "CHARACTER VARYING"), ("m", "MAP"), ("l", "ARRAY")
    ]  # fmt: skip
    assert "No schema selected." in error(conn, "DESCRIBE `desc.json`")
    got = rows(
        conn,
        "SELECT SCHEMA_NAME, IS_MUTABLE FROM INFORMATION_SCHEMA.SCHEMATA "
        "WHERE SCHEMA_NAME IN ('dfs.tmp', 'cp.default', 'sys') ORDER BY SCHEMA_NAME",
    )
    assert got == [("cp.default", "NO"), ("dfs.tmp", "YES"), ("sys", "NO")]


def test_refresh_and_explain(conn: Any, data_dir: Path) -> None:
    (data_dir / "rdir").mkdir()
    (data_dir / "rdir" / "a.json").write_text('{"a": 1}\n')
    assert rows(conn, "REFRESH TABLE METADATA dfs.data.`rdir`") == [
        (
            False,
            "Table rdir does not support metadata refresh. Support is currently limited to "
            "directory-based Parquet tables.",
        )
    ]
    assert rows(conn, "refresh table metadata dfs.data.`nothere`;")[0][0] is False
    cur = conn.cursor().execute("EXPLAIN PLAN FOR SELECT a FROM dfs.data.`rdir` WHERE a > 0")
    assert [d[0] for d in cur.description] == ["text", "json"]
    text, plan_json = cur.fetchone()
    lines = text.splitlines()
    assert lines[0] == "00-00    Screen"
    assert any(re.match(r"00-\d\d +Filter\(condition=\[.*a > 0", line) for line in lines)
    scans = [line for line in lines if " Scan(" in line]
    assert len(scans) == 1
    assert "table=[dfs.data.rdir]" in scans[0] and "columns=[`a`]" in scans[0]
    assert "numFiles=1" in scans[0] and "files=[a.json]" in scans[0]
    graph = json.loads(plan_json)["graph"]
    assert graph[-1]["pop"] == "screen"
    assert [g["table"] for g in graph if g["pop"] == "fs-scan"] == ["dfs.data.rdir"]


def test_trailing_semicolon_and_parse_position(conn: Any) -> None:
    assert rows(conn, "SELECT 1 AS x FROM (VALUES(1));") == [(1,)]
    msg = error(conn, "SELECT a\nFROM t WHERE (")
    assert msg.startswith("PARSE ERROR:") and "line 2" in msg


def test_view_definition_is_stored_as_drill_unparses_it(conn: Any) -> None:
    rows(conn, "USE dfs.tmp")
    rows(
        conn,
        "CREATE VIEW v_def AS SELECT cast(`employee_id` as integer) employeeid "
        "FROM cp.`employee.json`",
    )
    got = rows(conn, "SELECT * FROM INFORMATION_SCHEMA.VIEWS WHERE TABLE_NAME = 'v_def'")
    assert got == [
        (
            "DRILL",
            "dfs.tmp",
            "v_def",
            "SELECT CAST(`employee_id` AS INTEGER) AS `employeeid`\nFROM `cp`.`employee.json`",
        )
    ]
    assert rows(conn, "SHOW TABLES LIKE 'v_def'") == [("dfs.tmp", "v_def")]
    assert rows(conn, "DESCRIBE `v_def`") == [("employeeid", "INTEGER", "YES")]
    rows(conn, "DROP VIEW v_def")


def test_information_schema_files(conn: Any, data_dir: Path) -> None:
    (data_dir / "isf").mkdir()
    (data_dir / "isf" / "inner.json").write_text("{}\n")
    got = rows(
        conn,
        "SELECT FILE_NAME, RELATIVE_PATH, IS_DIRECTORY, WORKSPACE_NAME, ROOT_SCHEMA_NAME "
        "FROM INFORMATION_SCHEMA.`FILES` WHERE SCHEMA_NAME = 'dfs.data' AND FILE_NAME = 'isf'",
    )
    assert got == [("isf", "isf", True, "data", "dfs")]
    # not recursive by default
    got = rows(
        conn, "SELECT COUNT(*) FROM INFORMATION_SCHEMA.`FILES` WHERE FILE_NAME = 'inner.json'"
    )
    assert got == [(0,)]


def test_set_without_value_shows_the_option(conn: Any) -> None:
    cur = conn.cursor().execute("SET `STORE.FORMAT`")
    assert [d[0] for d in cur.description] == ["name", "value"]
    assert cur.fetchall() == [("store.format", "parquet")]
    assert rows(conn, "ALTER SESSION SET `store.format` = 'json';") == [
        (True, "store.format updated.")
    ]
    assert rows(conn, "ALTER SESSION SET `store.format`") == [("store.format", "json")]
    assert "VALIDATION ERROR: The option 'no.such.option' does not exist." in error(
        conn, "SET `no.such.option` = 1"
    )
    rows(conn, "ALTER SESSION RESET ALL")


def test_describe_schema_and_values(conn: Any, tmp_workspace: Path) -> None:
    cur = conn.cursor().execute("DESCRIBE SCHEMA dfs.tmp")
    assert [d[0] for d in cur.description] == ["schema", "properties"]
    ((schema, props),) = cur.fetchall()
    assert schema == "dfs.tmp"
    assert f'"location" : "{tmp_workspace}"' in props and '"writable" : true' in props
    assert "Invalid schema name [nope]" in error(conn, "DESCRIBE SCHEMA nope")
    assert rows(conn, "VALUES (1, 'a')") == [(1, "a")]


def test_information_schema_files_lists_recursively_when_asked(conn: Any, data_dir: Path) -> None:
    d = data_dir / "deep"
    (d / "one" / "two").mkdir(parents=True)
    (d / "top.csv").write_text("1\n")
    (d / "one" / "two" / "leaf.csv").write_text("22\n")
    sql = (
        "SELECT RELATIVE_PATH, IS_DIRECTORY, LENGTH FROM INFORMATION_SCHEMA.`FILES` "
        "WHERE SCHEMA_NAME = 'dfs.data' AND RELATIVE_PATH LIKE 'deep%' ORDER BY RELATIVE_PATH"
    )
    assert [r[:2] for r in rows(conn, sql)] == [("deep", True)]  # one level by default
    rows(conn, "ALTER SESSION SET `storage.list_files_recursively` = true")
    try:
        got = rows(conn, sql)
    finally:
        rows(conn, "ALTER SESSION RESET `storage.list_files_recursively`")
    assert [r[:2] for r in got] == [
        ("deep", True),
        ("deep/one", True),
        ("deep/one/two", True),
        ("deep/one/two/leaf.csv", False),
        ("deep/top.csv", False),
    ]
    assert got[3][2] == 3 and got[4][2] == 2
