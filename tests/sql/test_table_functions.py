"""Table functions: per-query format options and inline schemas."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from sqlglot import exp

from auger.sql.frontend.parser import parse_statement
from auger.sql.planning.table_functions import _inline_schema, is_table_function, table_function

from .helpers import names, rows


def test_parse_table_function() -> None:
    tree = parse_statement(
        "SELECT * FROM table(dfs.tmp.`a/b.csv`(type => 'text', fieldDelimiter => '|', "
        "extractHeader => true))"
    )
    node = tree.find(exp.Table)
    assert node is not None and is_table_function(node)
    fn = table_function(node)
    assert fn.parts == ["dfs", "tmp", "a/b.csv"]
    assert fn.options == {"type": "text", "fieldDelimiter": "|", "extractHeader": True}


def test_inline_schema() -> None:
    provided = _inline_schema(
        "inline=(col1 date properties {`drill.format` = `yyyy-MM-dd`}) "
        "properties {`drill.strict` = `false`}"
    )
    assert provided.schema[0].name == "col1"
    assert provided.schema[0].format == "yyyy-MM-dd"
    assert provided.properties == {"drill.strict": "false"}


def test_text_options_per_query(conn: Any, data_dir: Path) -> None:
    (data_dir / "tf.txt").write_text("a|b\n1|x\n2|y\n")
    sql = (
        "SELECT a, b FROM table(dfs.data.`tf.txt`(type => 'text', fieldDelimiter => '|', "
        "extractHeader => true)) ORDER BY a"
    )
    assert names(conn, sql) == ["a", "b"]
    assert rows(conn, sql) == [("1", "x"), ("2", "y")]


def test_inline_schema_per_query(conn: Any, data_dir: Path) -> None:
    (data_dir / "tf.csvh").write_text("id,start\n1,2019-02-01\n")
    got = rows(
        conn,
        "SELECT id, `start` FROM table(dfs.data.`tf.csvh`(schema => "
        "'inline=(id int, `start` date)'))",
    )
    assert got == [(1, dt.date(2019, 2, 1))]
