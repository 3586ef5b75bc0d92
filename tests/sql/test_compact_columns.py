"""``columns[n]`` of headerless text delivered as plain string columns
(auger.sql.planning.compact_columns).

Every answer here is Drill's: the field, NULL past the end of a short row, ``EXPR$<i>`` names,
whatever shape the query has (one SELECT, a subquery, a join, the array itself also used).
The planner must choose the compact scan for the plain shapes (the plan says so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return list(conn.cursor().execute(sql).fetchall())


def described(conn: Any, sql: str) -> list[str]:
    cur = conn.cursor().execute(sql)
    cur.fetchall()
    return [d[0] for d in cur.description]


@pytest.fixture
def ragged(tmp_path: Path) -> Path:
    path = tmp_path / "r.csv"
    path.write_text("1,a,x,p\n2,b\n3,a,y\n4\n")
    return path


def test_positions_past_a_short_row_are_null(conn: Any, ragged: Path) -> None:
    sql = f"SELECT columns[0], columns[2] FROM dfs.`{ragged}`"
    assert rows(conn, sql) == [("1", "x"), ("2", None), ("3", "y"), ("4", None)]
    assert described(conn, sql) == ["EXPR$0", "EXPR$1"]


def test_aggregate_grouped_by_a_position_reads_the_columns_directly(
    conn: Any, ragged: Path
) -> None:
    sql = (
        f"SELECT columns[1] AS k, COUNT(*) AS n, SUM(CAST(columns[0] AS INT)) AS s "
        f"FROM dfs.`{ragged}` GROUP BY columns[1] ORDER BY k"
    )
    assert rows(conn, sql) == [("a", 2, 4), ("b", 1, 2), (None, 1, 4)]  # NULLS LAST
    # the data source's own plan (files kept in the raw-file cache are read as Parquet)
    conn.cursor().execute("ALTER SESSION SET `auger.cache.enabled` = false")
    plan = rows(conn, "EXPLAIN PLAN FOR " + sql)[0][0]
    scans = [line for line in plan.splitlines() if " Scan(" in line]
    # the scan delivers the two positions as plain columns, not the ``columns`` array
    assert len(scans) == 1 and "`__columns_1`" in scans[0] and "`columns`" not in scans[0]


def test_where_on_a_position_beyond_every_row(conn: Any, ragged: Path) -> None:
    sql = f"SELECT columns[0] FROM dfs.`{ragged}` WHERE columns[7] IS NULL"
    assert [r[0] for r in rows(conn, sql)] == ["1", "2", "3", "4"]


def test_qualified_and_in_a_subquery(conn: Any, ragged: Path) -> None:
    assert rows(conn, f"SELECT t.columns[3] FROM dfs.`{ragged}` t WHERE t.columns[0] = '1'") == [
        ("p",)
    ]
    sql = f"SELECT x FROM (SELECT columns[2] AS x FROM dfs.`{ragged}`) WHERE x IS NOT NULL"
    assert sorted(r[0] for r in rows(conn, sql)) == ["x", "y"]
    # an outer `columns` that is not the file's array is left alone
    sql = (
        f"SELECT columns FROM (SELECT columns[1] AS columns FROM dfs.`{ragged}`) "
        "WHERE columns = 'b'"
    )
    assert rows(conn, sql) == [("b",)]


def test_join_of_two_headerless_files(conn: Any, ragged: Path, tmp_path: Path) -> None:
    other = tmp_path / "o.csv"
    other.write_text("a,alpha\nb,beta\n")
    sql = (
        f"SELECT r.columns[0], o.columns[1] FROM dfs.`{ragged}` r "
        f"JOIN dfs.`{other}` o ON r.columns[1] = o.columns[0] ORDER BY r.columns[0]"
    )
    assert rows(conn, sql) == [("1", "alpha"), ("2", "beta"), ("3", "alpha")]


def test_the_array_itself_keeps_drill_shape(conn: Any, ragged: Path) -> None:
    sql = f"SELECT columns[1], columns FROM dfs.`{ragged}`"
    got = rows(conn, sql)
    assert [r[0] for r in got] == ["a", "b", "a", None]
    assert [list(r[1]) for r in got] == [["1", "a", "x", "p"], ["2", "b"], ["3", "a", "y"], ["4"]]


def test_with_implicit_columns_over_a_directory(conn: Any, tmp_path: Path) -> None:
    for d in ("d1", "d2"):
        (tmp_path / "t" / d).mkdir(parents=True)
        (tmp_path / "t" / d / "f.csv").write_text(f"{d},1\n{d},2,extra\n")
    sql = (
        f"SELECT dir0, filename, columns[1], columns[2] FROM dfs.`{tmp_path / 't'}` "
        "ORDER BY dir0, columns[1]"
    )
    assert rows(conn, sql) == [
        ("d1", "f.csv", "1", None),
        ("d1", "f.csv", "2", "extra"),
        ("d2", "f.csv", "1", None),
        ("d2", "f.csv", "2", "extra"),
    ]


def test_messy_file_read_by_the_python_parser_gives_the_same_nulls(
    conn: Any, tmp_path: Path
) -> None:
    path = tmp_path / "m.csv"
    path.write_text('1,a"b\n2\n')  # a quote inside a field: the Python parser reads it
    assert rows(conn, f"SELECT columns[0], columns[1] FROM dfs.`{path}`") == [
        ("1", 'a"b'),
        ("2", None),
    ]
