"""A column qualified by its table's whole name (schema included), as SQLAlchemy writes it for
a schema-qualified table, is that table's column; a qualifier that is no table's name is a map
member path as before."""

from __future__ import annotations

from typing import Any

from tests.sql.helpers import error, rows


def test_schema_qualified_columns_name_the_tables_columns(make_conn: Any) -> None:
    conn = make_conn()
    rows(conn, "CREATE TABLE dfs.tmp.qualified AS SELECT 1 AS a, 2 AS b")
    try:
        assert rows(conn, "SELECT `dfs.tmp`.qualified.b FROM `dfs.tmp`.qualified") == [(2,)]
        got = rows(
            conn,
            "SELECT dfs.tmp.qualified.b, tmp.qualified.a FROM dfs.tmp.qualified "
            "WHERE dfs.tmp.qualified.a = 1",
        )
        assert got == [(2, 1)]
        # an aliased table goes by its alias only, as in Drill
        text = error(conn, "SELECT dfs.tmp.qualified.b FROM dfs.tmp.qualified AS q")
        assert "VALIDATION ERROR" in text
    finally:
        rows(conn, "DROP TABLE dfs.tmp.qualified")


def test_a_table_qualified_member_path_is_unchanged(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT t.m.a FROM (SELECT named_struct('a', 5) AS m) AS t",
    )
    assert got == [(5,)]
