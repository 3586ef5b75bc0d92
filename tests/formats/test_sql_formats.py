"""The Drill text and JSON cases users meet most, end to end through SQL (DB-API)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return conn.cursor().execute(sql).fetchall()


def names(conn: Any, sql: str) -> list[str]:
    return [d[0] for d in conn.cursor().execute(sql).description]


@pytest.fixture
def fmt_dir(data_dir: Path, request: pytest.FixtureRequest) -> Path:
    d = data_dir / f"fmt_{request.node.name.replace('[', '_').replace(']', '')}"
    d.mkdir()
    return d


def test_csvh_headers_and_cars(conn: Any, fmt_dir: Path) -> None:
    (fmt_dir / "cars.csvh").write_text(
        "Year,Make,Model,Description,Price\n"
        '1997,Ford,E350,"ac, abs, moon",3000.00\n'
        '1999,Chevy,"Venture ""Extended Edition""","",4900.00\n'
        '1996,Jeep,Grand Cherokee,"MUST SELL!\nair, moon roof, loaded",4799.00\n'
    )
    table = f"dfs.data.`{fmt_dir.name}/cars.csvh`"
    assert names(conn, f"SELECT * FROM {table}") == [
        "Year",
        "Make",
        "Model",
        "Description",
        "Price",
    ]
    assert rows(conn, f"SELECT Model FROM {table} WHERE Make = 'Chevy'") == [
        ('Venture "Extended Edition"',)
    ]
    assert rows(conn, f"SELECT COUNT(Make) FROM {table}") == [(3,)]
    desc = rows(conn, f"SELECT Description FROM {table} WHERE Make = 'Jeep'")
    assert desc == [("MUST SELL!\nair, moon roof, loaded",)]


def test_csvh_invalid_headers_cleaned(conn: Any, fmt_dir: Path) -> None:
    (fmt_dir / "h.csvh").write_text("$,,9b,c,c,c_2\n10,foo,bar,fourth,fifth,sixth\n")
    sql = f"SELECT * FROM dfs.data.`{fmt_dir.name}/h.csvh`"
    assert names(conn, sql) == ["column_1", "column_2", "col_9b", "c", "c_2", "c_2_2"]
    assert rows(conn, sql) == [("10", "foo", "bar", "fourth", "fifth", "sixth")]


def test_csvh_ragged_rows_fill_blanks(conn: Any, fmt_dir: Path) -> None:
    (fmt_dir / "r.csvh").write_text("a,b,c\n10,dino\n20,foo,bar\n30\n")
    got = rows(conn, f"SELECT a, b, c FROM dfs.data.`{fmt_dir.name}/r.csvh` ORDER BY a")
    assert got == [("10", "dino", ""), ("20", "foo", "bar"), ("30", "", "")]


def test_csv_columns_index_and_ragged(conn: Any, fmt_dir: Path) -> None:
    (fmt_dir / "r.csv").write_text("10,dino\n20,foo,bar\n30\n")
    table = f"dfs.data.`{fmt_dir.name}/r.csv`"
    assert rows(conn, f"SELECT columns FROM {table}") == [
        (["10", "dino"],),
        (["20", "foo", "bar"],),
        (["30"],),
    ]
    sql = f"SELECT columns[0], columns[2] FROM {table}"
    assert names(conn, sql) == ["EXPR$0", "EXPR$1"]
    assert rows(conn, sql) == [("10", None), ("20", "bar"), ("30", None)]


def test_csv_comment_lines_skipped(conn: Any, fmt_dir: Path) -> None:
    (fmt_dir / "c.csv").write_text("# generated\n1,a\n2,b\n")
    assert rows(conn, f"SELECT columns[1] AS v FROM dfs.data.`{fmt_dir.name}/c.csv`") == [
        ("a",),
        ("b",),
    ]


def test_csv_bad_quote_is_data_read_error(conn: Any, fmt_dir: Path) -> None:
    (fmt_dir / "q.csv").write_text('1,a\n2,"b\n3,c\n')
    with pytest.raises(Exception, match="DATA_READ ERROR") as info:
        rows(conn, f"SELECT columns FROM dfs.data.`{fmt_dir.name}/q.csv`")
    assert "q.csv" in str(info.value)


def test_csv_quotes_inside_fields_as_drill_reads_them(conn: Any, fmt_dir: Path) -> None:
    """A quote not closing its field stays in the value; the field may go on over a line."""
    (fmt_dir / "m.csv").write_text('1,"not"end"\n2,ab"c\n3,"a"b\nc"\n')
    table = f"dfs.data.`{fmt_dir.name}/m.csv`"
    assert rows(conn, f"SELECT columns[0], columns[1] FROM {table}") == [
        ("1", 'not"end'),
        ("2", 'ab"c'),
        ("3", 'a"b\nc'),
    ]
    assert rows(conn, f"SELECT COUNT(*) FROM {table}") == [(3,)]


def test_json_empty_objects_agree_with_count(conn: Any, fmt_dir: Path) -> None:
    """``{}`` lines are rows: SELECT * gives them (rows of no columns, as Drill's wildcard over
    an empty schema), and COUNT(*) counts them; beside real objects they are rows of NULLs."""
    (fmt_dir / "e.json").write_text("{}\n{}\n{}\n")
    empty = f"dfs.data.`{fmt_dir.name}/e.json`"
    cur = conn.cursor().execute(f"SELECT * FROM {empty}")
    assert (cur.description or []) == [] and cur.fetchall() == [(), (), ()]
    assert rows(conn, f"SELECT * FROM {empty} LIMIT 2") == [(), ()]
    assert rows(conn, f"SELECT COUNT(*) FROM {empty}") == [(3,)]
    assert rows(conn, f"SELECT COUNT(*) FROM (SELECT * FROM {empty})") == [(3,)]
    (fmt_dir / "m.json").write_text('{}\n{"a": 1}\n{}\n')
    mixed = f"dfs.data.`{fmt_dir.name}/m.json`"
    assert rows(conn, f"SELECT * FROM {mixed}") == [(None,), (1,), (None,)]
    assert rows(conn, f"SELECT COUNT(*) FROM {mixed}") == [(3,)]


def test_json_all_text_mode_by_alter_session(conn: Any, fmt_dir: Path) -> None:
    (fmt_dir / "mixed.json").write_text(
        '{"a": 1, "m": {"b": 1.50}}\n{"a": "x", "m": {"b": true}}\n'
    )
    table = f"dfs.data.`{fmt_dir.name}/mixed.json`"
    with pytest.raises(Exception, match="DATA_READ ERROR"):
        rows(conn, f"SELECT a FROM {table}")
    conn.cursor().execute("ALTER SESSION SET `store.json.all_text_mode` = true")
    try:
        assert rows(conn, f"SELECT t.a, t.m.b FROM {table} t") == [("1", "1.50"), ("x", "true")]
    finally:
        conn.cursor().execute("ALTER SESSION RESET `store.json.all_text_mode`")


def test_json_int_then_double(conn: Any, fmt_dir: Path) -> None:
    (fmt_dir / "n.json").write_text('{"v": 1}\n{"v": 2.5}\n')
    assert rows(conn, f"SELECT SUM(v) AS s FROM dfs.data.`{fmt_dir.name}/n.json`") == [(3.5,)]


def test_parquet_column_of_null_type_reads_as_null_int(conn: Any, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": [1, 2], "x": pa.nulls(2)}), tmp_path / "n.parquet")
    cur = conn.cursor()
    cur.execute(f"SELECT a, x FROM dfs.`{tmp_path}/n.parquet` ORDER BY a")
    assert cur.fetchall() == [(1, None), (2, None)]
    assert cur.description[1][1] == "INTEGER"
