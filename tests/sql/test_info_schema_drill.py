"""Metadata statements answered as Drill answers them: information_schema, SHOW, DESCRIBE, USE."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from auger.sql.catalog.information_schema import INFO_TABLES
from auger.sql.catalog.table_listing import INFO_TABLE_NAMES
from tests.sql.helpers import error, names, rows

IS_TABLES = ["CATALOGS", "COLUMNS", "FILES", "PARTITIONS", "SCHEMATA", "TABLES", "VIEWS"]


def test_listed_information_schema_tables_are_the_ones_built() -> None:
    """SHOW TABLES lists INFORMATION_SCHEMA's tables by name; each name has its builder."""
    assert sorted(INFO_TABLE_NAMES) == sorted(INFO_TABLES) == IS_TABLES


def test_catalogs_has_drills_one_row(conn: Any) -> None:
    sql = "SELECT * FROM INFORMATION_SCHEMA.CATALOGS"
    assert names(conn, sql) == ["CATALOG_NAME", "CATALOG_DESCRIPTION", "CATALOG_CONNECT"]
    assert rows(conn, sql) == [("DRILL", "The internal metadata used by Drill", "")]
    # the schema and table names are not case-sensitive
    assert rows(conn, "SELECT CATALOG_NAME FROM information_schema.`catalogs`") == [("DRILL",)]


def test_schema_is_spelled_in_lower_case(conn: Any) -> None:
    assert ("information_schema",) in rows(conn, "SHOW SCHEMAS")
    assert ("INFORMATION_SCHEMA",) not in rows(conn, "SHOW DATABASES")
    got = rows(
        conn,
        "SELECT SCHEMA_NAME, TYPE, IS_MUTABLE FROM INFORMATION_SCHEMA.SCHEMATA "
        "WHERE SCHEMA_NAME IN ('information_schema', 'sys', 'dfs.tmp') ORDER BY SCHEMA_NAME",
    )
    assert got == [
        ("dfs.tmp", "file", "YES"),
        ("information_schema", "ischema", "NO"),
        ("sys", "system-tables", "NO"),
    ]


def test_show_tables_from_information_schema_lists_all_its_tables(conn: Any) -> None:
    expected = [("information_schema", t) for t in IS_TABLES]
    assert sorted(rows(conn, "SHOW TABLES FROM INFORMATION_SCHEMA")) == expected
    assert sorted(rows(conn, "SHOW TABLES IN information_schema")) == expected
    assert rows(conn, "SELECT * FROM INFORMATION_SCHEMA.`PARTITIONS`") == []
    assert "PARTITION_VALUE" in names(conn, "SELECT * FROM INFORMATION_SCHEMA.`PARTITIONS`")


def test_show_tables_like_and_where(conn: Any) -> None:
    got = rows(conn, "SHOW TABLES FROM INFORMATION_SCHEMA WHERE TABLE_NAME='VIEWS'")
    assert got == [("information_schema", "VIEWS")]
    got = rows(conn, "SHOW TABLES FROM INFORMATION_SCHEMA WHERE TABLE_NAME LIKE 'C%'")
    assert got == [("information_schema", "CATALOGS"), ("information_schema", "COLUMNS")]
    conn.cursor().execute("USE INFORMATION_SCHEMA")
    assert rows(conn, "SHOW TABLES LIKE '%CH%'") == [("information_schema", "SCHEMATA")]
    assert names(conn, "SHOW TABLES WHERE TABLE_NAME = 'FILES'") == ["TABLE_SCHEMA", "TABLE_NAME"]
    assert rows(conn, "SHOW TABLES WHERE TABLE_NAME = 'FILES'") == [("information_schema", "FILES")]


def test_show_schemas_and_databases_like_and_where(conn: Any) -> None:
    assert rows(conn, "SHOW DATABASES WHERE SCHEMA_NAME='dfs.tmp'") == [("dfs.tmp",)]
    got = rows(conn, "SHOW SCHEMAS WHERE SCHEMA_NAME in ('dfs.tmp', 'dfs.root')")
    assert sorted(got) == [("dfs.root",), ("dfs.tmp",)]
    assert names(conn, "SHOW SCHEMAS WHERE SCHEMA_NAME = 'sys'") == ["SCHEMA_NAME"]
    assert rows(conn, "SHOW DATABASES LIKE '%y%'") == [("sys",)]
    assert rows(conn, "SHOW SCHEMAS LIKE 'INFORMATION%'") == [("information_schema",)]


def test_describe_information_schema_tables_says_not_null(conn: Any) -> None:
    conn.cursor().execute("USE INFORMATION_SCHEMA")
    assert rows(conn, "DESCRIBE CATALOGS") == [
        ("CATALOG_NAME", "CHARACTER VARYING", "NO"),
        ("CATALOG_DESCRIPTION", "CHARACTER VARYING", "NO"),
        ("CATALOG_CONNECT", "CHARACTER VARYING", "NO"),
    ]
    assert rows(conn, "DESCRIBE TABLE CATALOGS") == rows(conn, "DESCRIBE CATALOGS")
    described = rows(conn, "DESCRIBE INFORMATION_SCHEMA.`TABLES`")
    assert [r[0] for r in described][-2:] == ["NUM_ROWS", "LAST_MODIFIED_TIME"]
    assert {r[2] for r in described} == {"NO"}
    listed = rows(
        conn,
        "SELECT DISTINCT IS_NULLABLE FROM INFORMATION_SCHEMA.`COLUMNS` "
        "WHERE TABLE_SCHEMA = 'information_schema'",
    )
    assert listed == [("NO",)]


def test_describe_one_column_or_a_pattern(conn: Any) -> None:
    conn.cursor().execute("USE INFORMATION_SCHEMA")
    assert rows(conn, "DESCRIBE `TABLES` TABLE_CATALOG") == [
        ("TABLE_CATALOG", "CHARACTER VARYING", "NO")
    ]
    assert rows(conn, "DESCRIBE COLUMNS 'TABLE%'") == [
        ("TABLE_CATALOG", "CHARACTER VARYING", "NO"),
        ("TABLE_SCHEMA", "CHARACTER VARYING", "NO"),
        ("TABLE_NAME", "CHARACTER VARYING", "NO"),
    ]
    # the pattern is matched regardless of case, as Drill lower-cases both sides
    assert rows(conn, "DESCRIBE INFORMATION_SCHEMA.SCHEMATA 'schema%'") == [
        ("SCHEMA_NAME", "CHARACTER VARYING", "NO"),
        ("SCHEMA_OWNER", "CHARACTER VARYING", "NO"),
    ]
    assert rows(conn, "DESCRIBE INFORMATION_SCHEMA.SCHEMATA 'nothing%'") == []


def test_describe_parquet_required_columns_are_not_nullable(conn: Any, data_dir: Path) -> None:
    schema = pa.schema([pa.field("a", pa.int32(), nullable=False), pa.field("b", pa.string())])
    table = pa.table({"a": [1, 2], "b": ["x", None]}, schema=schema)
    pq.write_table(table, data_dir / "req.parquet")
    assert rows(conn, "DESCRIBE dfs.data.`req.parquet`") == [
        ("a", "INTEGER", "NO"),
        ("b", "CHARACTER VARYING", "YES"),
    ]
    assert rows(conn, "DESCRIBE dfs.data.`req.parquet` 'B%'") == [("b", "CHARACTER VARYING", "YES")]


def test_use_answers_with_the_schema_as_named(conn: Any) -> None:
    assert rows(conn, "USE dfs") == [(True, "Default schema changed to [dfs]")]
    assert rows(conn, "USE tmp") == [(True, "Default schema changed to [dfs.tmp]")]
    assert rows(conn, "USE dfs.`default`") == [(True, "Default schema changed to [dfs.default]")]
    assert rows(conn, "USE information_schema") == [
        (True, "Default schema changed to [information_schema]")
    ]
    assert "Schema [invalid.schema] is not valid with respect to either root schema" in error(
        conn, "USE invalid.schema"
    )


def test_drop_of_an_unknown_bare_name_is_not_found_whatever_the_default_schema(
    conn: Any,
) -> None:
    """A bare name that is no temporary table is "not found", not a complaint about a schema
    the statement never named (the root, or a read-only default schema)."""
    for use in (None, "dfs.root", "information_schema", "dfs.tmp", "dfs.data"):
        if use:
            conn.cursor().execute(f"USE {use}")
        message = error(conn, "DROP TABLE no_such_table")
        assert "VALIDATION ERROR: Table [no_such_table] is not found." in message, use
        assert rows(conn, "DROP TABLE IF EXISTS no_such_table") == [
            (False, "Table [no_such_table] not found")
        ]
    # a named read-only schema is still refused as immutable
    assert "immutable" in error(conn, "DROP TABLE dfs.root.no_such_table")
