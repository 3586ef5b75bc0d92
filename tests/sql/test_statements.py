"""Grammars of the Drill statements sqlglot cannot parse (no Spark needed)."""

from __future__ import annotations

import pytest

from auger.errors import UserError
from auger.sql.frontend import statement_grammar as st
from auger.sql.frontend.command_grammar import parse_command


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SHOW TABLES", st.ShowTables(None, None)),
        ("show tables in dfs.tmp like 'a%';", st.ShowTables(("dfs", "tmp"), "a%")),
        ("SHOW FILES", st.ShowFiles(None)),
        ("SHOW FILES FROM dfs.tmp.`sub dir`", st.ShowFiles(("dfs", "tmp", "sub dir"))),
        ("DESCRIBE dfs.tmp.`v`", st.Describe(("dfs", "tmp", "v"))),
        ("desc t", st.Describe(("t",))),
        ("DESCRIBE SCHEMA FOR TABLE dfs.tmp.t", st.DescribeSchema(("dfs", "tmp", "t"))),
        ("describe schema for table t as statement", st.DescribeSchema(("t",), "STATEMENT")),
        (
            "CREATE OR REPLACE SCHEMA (id INT NOT NULL DEFAULT '-1') FOR TABLE dfs.tmp.`t` "
            "PROPERTIES ('drill.strict' = 'true')",
            st.CreateSchema(
                True,
                "id INT NOT NULL DEFAULT '-1'",
                None,
                ("dfs", "tmp", "t"),
                None,
                {"drill.strict": "true"},
            ),
        ),
        (
            "create schema load 'file:///x' path 'file:///y/s.json'",
            st.CreateSchema(False, None, "file:///x", None, "file:///y/s.json"),
        ),
        ("DROP SCHEMA IF EXISTS FOR TABLE t", st.DropSchema(True, ("t",))),
        (
            "CREATE OR REPLACE VIEW dfs.tmp.v (a, `b`) AS SELECT x, y FROM t;",
            st.CreateView(True, False, ("dfs", "tmp", "v"), ("a", "b"), "SELECT x, y FROM t"),
        ),
        (
            "create view if not exists v as\nselect 1",
            st.CreateView(False, True, ("v",), None, "select 1"),
        ),
        ("DROP VIEW IF EXISTS `dfs.tmp`.v", st.DropView(True, ("dfs.tmp", "v"))),
        ("REFRESH TABLE METADATA dfs.tmp.`t`", st.RefreshMetadata(("dfs", "tmp", "t"))),
        (
            "refresh table metadata columns (`date`, o_orderdate, m.a) dfs.`t`",
            st.RefreshMetadata(("dfs", "t"), ("date", "o_orderdate", "m")),
        ),
        ("REFRESH TABLE METADATA COLUMNS NONE t", st.RefreshMetadata(("t",), ())),
        ("EXPLAIN PLAN FOR SELECT 1", st.Explain("SELECT 1")),
        ("explain plan without implementation for select 1", st.Explain("select 1", False)),
    ],
)
def test_parses(sql: str, expected: object) -> None:
    assert parse_command(sql) == expected


@pytest.mark.parametrize(
    "sql",
    ["CREATE TABLE t AS SELECT 1", "DROP TABLE t", "SELECT 1", "DESCRIBE SELECT 1", "SHOW SCHEMAS"],
)
def test_others_are_left_to_sqlglot(sql: str) -> None:
    assert not isinstance(parse_command(sql), (st.CreateView, st.DropView, st.Describe))


@pytest.mark.parametrize(
    ("sql", "needle"),
    [
        ("drop schema", 'PARSE ERROR: Encountered "<EOF>"'),
        ("create schema (a int) for table t path 'x'", 'PARSE ERROR: Encountered "path"'),
        (
            "create or replace schema (a int) path '/x'",
            "PARSE ERROR: <OR REPLACE> cannot be used with <PATH> property",
        ),
        ("SHOW TABLES IN", 'PARSE ERROR: Encountered "<EOF>" at line 1, column 15.'),
        ("SHOW FILES\nIN dfs.tmp extra", 'Encountered "extra" at line 2, column 12.'),
    ],
)
def test_malformed_statements_point_at_the_token(sql: str, needle: str) -> None:
    with pytest.raises(UserError) as info:
        parse_command(sql)
    assert needle in str(info.value)


def test_alter_schema_grammar() -> None:
    got = parse_command(
        "ALTER SCHEMA FOR TABLE dfs.tmp.t ADD OR REPLACE COLUMNS (a INT, b VARCHAR) "
        "PROPERTIES ('k' = 'v')"
    )
    assert got == st.AlterSchema(
        ("dfs", "tmp", "t"), None, True, True, "a INT, b VARCHAR", {"k": "v"}
    )
    got = parse_command("alter schema path '/p/s' remove columns (`a`) properties ('k')")
    assert got == st.AlterSchema(None, "/p/s", False, False, "`a`", {"k": ""})
