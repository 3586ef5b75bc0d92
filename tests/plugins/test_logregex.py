"""Drill's logRegex format, shipped as an entry-point plugin on the reader framework and
queried through SQL: Drill's own example configuration pasted as it is, SELECT *, projection,
COUNT(*), implicit columns, the special columns, maxErrors, a table function."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

import auger
from auger.formats import get_format, known_formats
from tests.plugins.helpers import connect_with_formats, rows

pytestmark = pytest.mark.spark

MYSQL_LOG = """\
070823 21:00:32       1 Connect     root@localhost on test1
070823 21:00:48       1 Query       show tables
this line is noise
070823 21:00:56       1 Query       select * from category
070917 16:29:01      21 Query       select * from location
"""

# Drill's test file for a regex with no schema (its TestLogReader's regex/mysql.sqllog)
DRILL_SQLLOG = """\
070823 21:00:32       1 Connect     root@localhost on test1
070823 21:00:48       1 Query       show tables
070823 21:00:56       1 Query       select * from category
070917 16:29:01      21 Query       select * from location
070917 16:29:12      21 Query       select * from location where id = 1 LIMIT 1
dfadkfjaldkjafsdfjlksdjflksjdlkfjsldkfjslkjl
"""
DRILL_SQLLOG_ROWS = [
    ["070823", "21:00:32", "1", "Connect", "root@localhost on test1"],
    ["070823", "21:00:48", "1", "Query", "show tables"],
    ["070823", "21:00:56", "1", "Query", "select * from category"],
    ["070917", "16:29:01", "21", "Query", "select * from location"],
    ["070917", "16:29:12", "21", "Query", "select * from location where id = 1 LIMIT 1"],
]
DATE_ONLY_PATTERN = r"(\d\d\d\d)-(\d\d)-(\d\d) .*"

# Drill's example configuration of the plugin, with its camelCase keys, as a dict
MYSQL_FORMAT = {
    "type": "logRegex",
    "extension": "log",
    "regex": r"(\d{6})\s(\d{2}:\d{2}:\d{2})\s+(\d+)\s(\w+)\s+(.+)",
    "maxErrors": 10,
    "schema": [
        {"fieldName": "eventDate", "fieldType": "DATE", "format": "yyMMdd"},
        {"fieldName": "eventTime", "fieldType": "TIME", "format": "HH:mm:ss"},
        {"fieldName": "PID", "fieldType": "INT"},
        {"fieldName": "action"},
        {"fieldName": "query"},
    ],
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logs")
    (root / "mysql" / "2007").mkdir(parents=True)
    (root / "mysql" / "2007" / "mysql.log").write_text(MYSQL_LOG)
    (root / "kv").mkdir()
    (root / "kv" / "plain.txt").write_text("a=1 b=x\na=2 b=y\nbroken\nbroken\nbroken\n")
    (root / "regex").mkdir()
    (root / "regex" / "mysql.sqllog").write_text(DRILL_SQLLOG)
    (root / "tf").mkdir()
    (root / "tf" / "simple.logf").write_text(
        "2017-12-17 10:52:41,820 [main] INFO  o.a.d.e.e.f.FunctionImplementationRegistry - "
        "Function registry loaded.\n"
        "2017-12-18 10:52:37,652 [main] INFO  o.a.drill.common.config.DrillConfig - "
        "Configuration and plugin file(s) identified in 115ms.\n"
        "2017-12-19 11:12:27,278 [main] ERROR o.apache.drill.exec.server.Drillbit - "
        "Failure during initial startup of Drillbit.\n"
    )
    return root


@pytest.fixture(scope="module")
def conn(spark: Any, logs: Path) -> Iterator[Any]:
    formats = {
        "mysql": MYSQL_FORMAT,
        "kv": {
            "type": "logRegex",
            "extensions": ["txt"],
            "regex": r"a=(\d+) b=(\w+)",
            "max_errors": 2,
        },
        "mysql-log": {
            "type": "logRegex",
            "extension": "sqllog",
            "regex": r"(\d{6})\s(\d{2}:\d{2}:\d{2})\s+(\d+)\s(\w+)\s+(.+)",
        },
        # only the extension: the regex comes from a table function
        "empty-log": {"type": "logRegex", "extension": "logf", "regex": r"(.*)"},
    }
    with connect_with_formats("logs", logs, formats) as c:
        yield c


def test_registered_by_entry_point_like_a_third_party() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="auger.formats")}
    assert names["logRegex"] == "auger.plugins.logregex:LogRegexFormat"
    assert "logRegex" in known_formats()
    assert type(get_format("logRegex")).__name__ == "LogRegexFormat"


def test_select_star_has_the_schema_columns_typed_and_no_special_ones(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("SELECT * FROM dfs.logs.`mysql/2007/mysql.log` ORDER BY eventDate, eventTime")
    names = [d[0] for d in cur.description]
    assert names == ["eventDate", "eventTime", "PID", "action", "query"]
    got = cur.fetchall()
    assert len(got) == 4  # the noise line is an error under maxErrors, skipped
    first = tuple(got[0])
    assert str(first[0]) == "2007-08-23" and str(first[1]).startswith("21:00:32")
    assert first[2:] == (1, "Connect", "root@localhost on test1")


def test_projection_count_and_implicit_columns(conn: Any) -> None:
    assert rows(conn, "SELECT COUNT(*) FROM dfs.logs.`mysql`") == [(4,)]
    got = rows(
        conn,
        "SELECT PID, action, filename, dir0 FROM dfs.logs.`mysql` WHERE action = 'Query' "
        "AND filename = 'mysql.log' ORDER BY PID",
    )
    assert got == [(1, "Query", "mysql.log", "2007")] * 2 + [(21, "Query", "mysql.log", "2007")]
    got = rows(conn, "SELECT SUM(PID) AS s FROM dfs.logs.`mysql/2007/mysql.log` GROUP BY action")
    assert sorted(got) == [(1,), (23,)]


def test_raw_and_unmatched_rows_come_only_when_named(conn: Any) -> None:
    assert rows(conn, "SELECT _unmatched_rows FROM dfs.logs.`mysql/2007/mysql.log`") == [
        ("this line is noise",)
    ]
    got = rows(conn, "SELECT PID, _raw, _unmatched_rows FROM dfs.logs.`mysql/2007/mysql.log`")
    assert len(got) == 5
    assert (None, None, "this line is noise") in got
    assert (21, "070917 16:29:01      21 Query       select * from location", None) in got


def test_star_query_no_schema_is_one_columns_array(conn: Any) -> None:
    # Drill's TestLogReader.testStarQueryNoSchema
    cur = conn.cursor()
    cur.execute("SELECT * FROM dfs.logs.`regex/mysql.sqllog`")
    assert [d[0] for d in cur.description] == ["columns"]
    assert [list(r[0]) for r in cur.fetchall()] == DRILL_SQLLOG_ROWS


def test_some_fields_query_no_schema_indexes_the_array(conn: Any) -> None:
    # Drill's TestLogReader.testSomeFieldsQueryNoSchema
    cur = conn.cursor()
    cur.execute("SELECT columns[0], columns[4] FROM dfs.logs.`regex/mysql.sqllog`")
    assert [d[0] for d in cur.description] == ["EXPR$0", "EXPR$1"]
    assert [tuple(r) for r in cur.fetchall()] == [(r[0], r[4]) for r in DRILL_SQLLOG_ROWS]
    got = rows(conn, "SELECT typeof(columns[1]), columns[9] FROM dfs.logs.`kv/plain.txt` LIMIT 1")
    assert got == [("VARCHAR", None)]


def test_raw_and_unmatched_no_schema(conn: Any) -> None:
    # Drill's TestLogReader.testRawUMNoSchema: the special columns are the same without a schema
    got = rows(conn, "SELECT _raw, _unmatched_rows FROM dfs.logs.`regex/mysql.sqllog`")
    lines = DRILL_SQLLOG.splitlines()
    assert got == [(line, None) for line in lines[:-1]] + [(None, lines[-1])]


def test_table_function_with_only_a_regex_gives_the_array(conn: Any) -> None:
    # Drill's TestLogReader.testTableFunction
    escaped = DATE_ONLY_PATTERN.replace("\\", "\\\\")
    cur = conn.cursor()
    cur.execute(
        "SELECT * FROM table(dfs.logs.`tf/simple.logf`(type => 'logRegex', "
        f"regex => '{escaped}', maxErrors => 10))"
    )
    assert [d[0] for d in cur.description] == ["columns"]
    got = [list(r[0]) for r in cur.fetchall()]
    assert got == [["2017", "12", "17"], ["2017", "12", "18"], ["2017", "12", "19"]]


def test_named_groups_name_columns_without_a_schema(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT y, typeof(y) FROM table(dfs.logs.`tf/simple.logf`(type => 'logRegex', "
        r"regex => '(?<y>\d{4})-.*')) LIMIT 1",
    )
    assert got == [("2017", "VARCHAR")]


def test_more_errors_than_max_errors_fail_with_file_and_line(conn: Any) -> None:
    # plain.txt has three lines that do not match and max_errors = 2
    with pytest.raises(auger.DatabaseError) as info:
        rows(conn, "SELECT columns[0] FROM dfs.logs.`kv/plain.txt`")
    text = str(info.value)
    assert text.startswith("DATA_READ ERROR")
    assert "plain.txt" in text and "Line: 5" in text and "maxErrors (2)" in text


def test_table_function_options(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT columns[1] AS b FROM table(dfs.logs.`kv/plain.txt`(type => 'logRegex', "
        r"regex => 'a=(\d+) b=(\w+)', maxErrors => 5)) ORDER BY b",
    )
    assert got == [("x",), ("y",)]


def test_small_batches_keep_every_row(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.scan.batch_rows` = 1")
    try:
        assert rows(conn, "SELECT COUNT(PID) FROM dfs.logs.`mysql/2007/mysql.log`") == [(4,)]
    finally:
        cur.execute("ALTER SESSION RESET `auger.scan.batch_rows`")


def test_a_regex_without_groups_is_a_clear_error(conn: Any) -> None:
    with pytest.raises(auger.DatabaseError, match="has no groups"):
        rows(conn, "SELECT * FROM table(dfs.logs.`kv/plain.txt`(type => 'logRegex', regex => 'a'))")
