"""Scan diagnostics: a column no file has answers as Drill answers, and says so.

The messages reach the DB-API as PEP 249's ``Cursor.messages``, the shell as lines after the
results, and REST clients in the query profile (``tests/server``).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import auger
from auger.cli.main import run_statements
from auger.spark import scan_report

from .helpers import rows


def _sales(data_dir: Path) -> str:
    root = data_dir / "sales"
    if not root.exists():
        root.mkdir()
        for n, region in enumerate(["east", "west", "north"]):
            (root / f"part{n}.csvh").write_text(f"region,amount\n{region},{n + 10}\n")
    return "dfs.data.sales"


def test_misspelt_column_answers_blanks_and_suggests_the_name(conn: Any, data_dir: Path) -> None:
    table = _sales(data_dir)
    cur = conn.cursor().execute(f"SELECT regoin FROM {table}")
    assert cur.fetchall() == [("",), ("",), ("",)]  # text: blanks, as Drill answers
    assert cur.messages == [
        (
            auger.Warning,
            "Column [regoin] was not found in any of the 3 files of dfs.data.sales; "
            "did you mean [region]?",
        )
    ]
    assert cur.warnings == [cur.messages[0][1]]


def test_clean_query_has_no_messages_and_execute_clears_them(conn: Any, data_dir: Path) -> None:
    table = _sales(data_dir)
    cur = conn.cursor().execute(f"SELECT regoin FROM {table}")
    assert len(cur.messages) == 1
    cur.execute(f"SELECT region FROM {table} ORDER BY region")
    assert cur.fetchall() == [("east",), ("north",), ("west",)]
    assert cur.messages == [] and cur.warnings == []


def test_missing_json_column_without_a_close_name(conn: Any, data_dir: Path) -> None:
    (data_dir / "sm_one.json").write_text(json.dumps({"id": 1, "name": "x"}) + "\n")
    cur = conn.cursor().execute("SELECT id, zzz FROM dfs.data.`sm_one.json`")
    assert cur.fetchall() == [(1, None)]  # other formats: NULL
    assert [text for _, text in cur.messages] == [
        "Column [zzz] was not found in the file of dfs.data.sm_one.json"
    ]


def test_implicit_and_partition_columns_are_not_missing(conn: Any, data_dir: Path) -> None:
    table = _sales(data_dir)
    cur = conn.cursor().execute(f"SELECT filename, dir0, region FROM {table} ORDER BY filename")
    assert rows(conn, f"SELECT COUNT(*) FROM {table}") == [(3,)]
    assert len(cur.fetchall()) == 3
    assert cur.messages == []


def test_shell_prints_messages_after_the_results(conn: Any, data_dir: Path) -> None:
    table = _sales(data_dir)
    out, err = io.StringIO(), io.StringIO()
    status = run_statements([f"SELECT regoin FROM {table}"], conn, "csv", out, err)
    assert status == 0
    assert out.getvalue().splitlines()[0] == "regoin"  # the csv on stdout stays clean
    assert err.getvalue().strip() == (
        "Warning: Column [regoin] was not found in any of the 3 files of dfs.data.sales; "
        "did you mean [region]?"
    )
    err = io.StringIO()
    run_statements([f"SELECT region FROM {table}"], conn, "csv", io.StringIO(), err)
    assert err.getvalue() == ""


# --------------------------------------------------------------- what the files of a table say
def _json_dir(data_dir: Path, name: str, files: dict[str, list[dict[str, Any]]]) -> str:
    root = data_dir / name
    if not root.exists():
        root.mkdir(parents=True)
        for file, records in files.items():
            path = root / file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return f"dfs.data.{name}"


def test_column_missing_from_some_files_names_them(conn: Any, data_dir: Path) -> None:
    table = _json_dir(
        data_dir,
        "sm_some",
        {
            "a.json": [{"id": 1, "x": 10}],
            "b.json": [{"id": 2}],
            "c.json": [{"id": 3}],
        },
    )
    cur = conn.cursor().execute(f"SELECT id, x FROM {table} ORDER BY id")
    assert cur.fetchall() == [(1, 10), (2, None), (3, None)]
    assert [text for _, text in cur.messages] == [
        f"Column [x] is missing from 2 of 3 files of {table} (b.json, c.json); read as NULL there"
    ]
    # a column every file has, or a wildcard, says nothing
    assert conn.cursor().execute(f"SELECT id FROM {table}").messages == []


def test_column_past_a_files_schema_sample_is_not_missing_there(
    conn: Any, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # b.json has x only after the first 1,000 records its schema is learned from
    late = [{"id": i} for i in range(2, 1102)] + [{"id": 1102, "x": 5}]
    table = _json_dir(
        data_dir,
        "sm_past_sample",
        {"a.json": [{"id": 1, "x": 10}], "b.json": late, "c.json": [{"id": 1103}]},
    )
    sql = f"SELECT id, x FROM {table} WHERE x IS NOT NULL ORDER BY id"
    cur = conn.cursor().execute(sql)
    assert cur.fetchall() == [(1, 10), (1102, 5)]
    assert [text for _, text in cur.messages] == [
        f"Column [x] is missing from 1 of 3 files of {table} (c.json); read as NULL there"
    ]
    # a file too large to look at whole is judged by its sample, and the message says so
    monkeypatch.setattr("auger.sql.planning.diagnostics._RECHECK_BYTES", 0)
    cur = conn.cursor().execute(sql)
    assert cur.fetchall() == [(1, 10), (1102, 5)]
    assert [text for _, text in cur.messages] == [
        f"Column [x] is missing from 2 of 3 files of {table} (b.json, c.json); read as NULL "
        "there (of large JSON files only the first 1000 records were looked at: "
        "auger.scan.json_sample_rows)"
    ]


def test_type_widened_across_files_names_types_and_files(conn: Any, data_dir: Path) -> None:
    table = _json_dir(
        data_dir, "sm_widen", {"a.json": [{"v": 1}], "b.json": [{"v": 2.5}], "c.json": [{"v": 3}]}
    )
    cur = conn.cursor().execute(f"SELECT v FROM {table} ORDER BY v")
    assert cur.fetchall() == [(1.0,), (2.5,), (3.0,)]
    assert [text for _, text in cur.messages] == [
        f"Column [v] of {table} is BIGINT in a.json, c.json and DOUBLE in b.json; read as DOUBLE"
    ]


def test_strict_schema_star_names_the_columns_left_out(conn: Any, data_dir: Path) -> None:
    root = data_dir / "sm_strict"
    root.mkdir(exist_ok=True)
    (root / "a.csvh").write_text("id,x,y\n1,p,2\n")
    (root / "b.csvh").write_text("id\n2\n")
    table = "dfs.data.sm_strict"
    cur = conn.cursor()
    cur.execute(f"CREATE SCHEMA (id BIGINT) FOR TABLE {table} PROPERTIES ('drill.strict' = 'true')")
    cur.execute(f"SELECT * FROM {table} ORDER BY id")
    assert cur.fetchall() == [(1,), (2,)]
    assert [text for _, text in cur.messages] == [
        f"SELECT * over {table} left out [x], [y]: the table's provided schema is strict and "
        "does not name them"
    ]


def test_pruned_files_are_statistics_not_messages(conn: Any, data_dir: Path) -> None:
    table = _json_dir(
        data_dir,
        "sm_pruned",
        {
            "2024/a.json": [{"id": 1}, {"id": 2}],
            "2025/b.json": [{"id": 3}],
            "2025/c.json": [{"id": 4}],
        },
    )
    cur = conn.cursor().execute(f"SELECT id FROM {table} WHERE dir0 = '2025' ORDER BY id")
    assert cur.scan_statistics[0]["files_pruned"] == 1  # known at plan time
    assert cur.fetchall() == [(3,), (4,)]
    assert cur.messages == []  # a clean query: figures, no messages
    assert cur.scan_statistics == [
        {
            "table": table,
            "files_listed": 3,
            "files_pruned": 1,
            "files_read": 2,
            "rows_read": 2,
            "records_skipped": 0,
            "files_from_cache": 0,
        }
    ]


def _bad_json(data_dir: Path) -> str:
    root = data_dir / "sm_bad"
    if not root.exists():
        root.mkdir()
        (root / "good.json").write_text('{"id": 1}\n{"id": 2}\n')
        (root / "bad.json").write_text('{"id": 3}\n{"id": oops}\n{"id": 4}\n{"id": }\n')
    return "dfs.data.sm_bad"


def test_skipped_records_are_reported_from_spark_tasks(conn: Any, data_dir: Path) -> None:
    table = _bad_json(data_dir)
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `store.json.reader.skip_invalid_records` = true")
    try:
        cur.execute(f"SELECT id FROM {table} ORDER BY id")
        assert cur.fetchall() == [(1,), (2,), (3,), (4,)]
        assert [text for _, text in cur.messages] == [
            f"Skipped 2 invalid records of bad.json in {table} (lines 2, 4)"
        ]
        stats = cur.scan_statistics
        assert stats[0]["rows_read"] == 4 and stats[0]["records_skipped"] == 2
        assert stats[0]["files_read"] == 2
        # the next statement starts clean (it reads only the good file: small files are read
        # while the statement is planned, so one reading bad.json would report its own skips)
        cur.execute("SELECT id FROM dfs.data.`sm_bad/good.json` WHERE id = 1")
        assert cur.fetchall() == [(1,)]
        assert cur.messages == []
    finally:
        cur.execute("ALTER SESSION RESET `store.json.reader.skip_invalid_records`")


@pytest.mark.spark
def test_spark_tasks_report_skipped_records_and_what_they_read(conn: Any, data_dir: Path) -> None:
    """Files read by Spark's tasks (none read on the driver, none from the raw-file cache)
    report their skipped records and figures as a read on the driver does, also where Spark
    found the installed ``auger`` data source by itself (the test run's own install)."""
    table = _bad_json(data_dir)
    cur = conn.cursor()
    settings = {
        "store.json.reader.skip_invalid_records": "true",
        "auger.scan.local_bytes": "0",
        "auger.cache.enabled": "false",
    }
    for name, value in settings.items():
        cur.execute(f"ALTER SESSION SET `{name}` = {value}")
    try:
        cur.execute(f"SELECT id FROM {table} ORDER BY id")
        assert cur.fetchall() == [(1,), (2,), (3,), (4,)]
        assert [text for _, text in cur.messages] == [
            f"Skipped 2 invalid records of bad.json in {table} (lines 2, 4)"
        ]
        stats = cur.scan_statistics[0]
        assert (stats["files_read"], stats["rows_read"], stats["records_skipped"]) == (2, 4, 2)
    finally:
        for name in settings:
            cur.execute(f"ALTER SESSION RESET `{name}`")


@pytest.mark.spark
@pytest.mark.parametrize("local_bytes", ["4194304", "0"], ids=["on the driver", "in tasks"])
def test_rows_read_by_a_count_are_the_rows_counted(
    conn: Any, data_dir: Path, local_bytes: str
) -> None:
    """A query that only counts rows reads one weighted row a batch: the scan still read
    every row of its files, and says so."""
    root = data_dir / "counted_rows"
    if not root.exists():
        root.mkdir()
        for n in range(2):
            lines = "".join(f"{i},x{i}\n" for i in range(5000 + n))
            (root / f"p{n}.csvh").write_text("a,b\n" + lines)
    cur = conn.cursor()
    settings = {"auger.scan.local_bytes": local_bytes, "auger.cache.enabled": "false"}
    for name, value in settings.items():
        cur.execute(f"ALTER SESSION SET `{name}` = {value}")
    try:
        cur.execute("SELECT COUNT(*) FROM dfs.data.counted_rows")
        assert cur.fetchall() == [(10_001,)]
        stats = cur.scan_statistics[0]
        assert (stats["files_read"], stats["rows_read"]) == (2, 10_001)
    finally:
        for name in settings:
            cur.execute(f"ALTER SESSION RESET `{name}`")


def test_skipped_records_of_a_driver_side_limit_scan(
    conn: Any, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _bad_json(data_dir)
    # no accumulator: only the scan run here, on the driver, can tell
    monkeypatch.setattr(scan_report, "_accumulator", lambda spark: None)
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `store.json.reader.skip_invalid_records` = true")
    try:
        cur.execute("SELECT * FROM dfs.data.`sm_bad/bad.json` LIMIT 10")
        assert sorted(cur.fetchall()) == [(3,), (4,)]
        assert [text for _, text in cur.messages] == [
            "Skipped 2 invalid records of bad.json in dfs.data.sm_bad/bad.json (lines 2, 4)"
        ]
    finally:
        cur.execute("ALTER SESSION RESET `store.json.reader.skip_invalid_records`")


def test_shell_prints_skipped_records_after_the_results(conn: Any, data_dir: Path) -> None:
    table = _bad_json(data_dir)
    conn.cursor().execute("ALTER SESSION SET `store.json.reader.skip_invalid_records` = true")
    try:
        out, err = io.StringIO(), io.StringIO()
        assert run_statements([f"SELECT COUNT(*) AS n FROM {table}"], conn, "csv", out, err) == 0
        assert out.getvalue().splitlines() == ["n", "4"]
        assert err.getvalue().strip() == (
            f"Warning: Skipped 2 invalid records of bad.json in {table} (lines 2, 4)"
        )
    finally:
        conn.cursor().execute("ALTER SESSION RESET `store.json.reader.skip_invalid_records`")


def test_without_a_channel_tasks_stay_quiet_and_answers_stay(
    conn: Any, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where tasks cannot report (Spark Connect has no accumulators), a query answers the same
    and its run-time figures are unknown rather than wrong."""
    table = _bad_json(data_dir)
    monkeypatch.setattr(scan_report, "_accumulator", lambda spark: None)
    cur = conn.cursor()
    # files this small are otherwise read on the driver, which reports what it skipped
    cur.execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")
    cur.execute("ALTER SESSION SET `store.json.reader.skip_invalid_records` = true")
    try:
        cur.execute(f"SELECT id FROM {table} ORDER BY id")
        assert cur.fetchall() == [(1,), (2,), (3,), (4,)]
        assert cur.messages == []
        stats = cur.scan_statistics
        assert stats[0]["files_listed"] == 2 and stats[0]["rows_read"] is None
    finally:
        cur.execute("ALTER SESSION RESET `store.json.reader.skip_invalid_records`")
        cur.execute("ALTER SESSION RESET `auger.scan.local_bytes`")


def test_text_column_missing_from_some_files(conn: Any, data_dir: Path) -> None:
    root = data_dir / "sm_text_some"
    root.mkdir(exist_ok=True)
    (root / "a.csvh").write_text("id,x\n1,p\n")
    (root / "b.csvh").write_text("id\n2\n")
    cur = conn.cursor().execute("SELECT id, x FROM dfs.data.sm_text_some ORDER BY id")
    assert cur.fetchall() == [("1", "p"), ("2", "")]
    assert [text for _, text in cur.messages] == [
        "Column [x] is missing from 1 of 2 files of dfs.data.sm_text_some (b.csvh); "
        "read as empty there"
    ]
