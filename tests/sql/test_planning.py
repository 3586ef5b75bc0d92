"""SELECT planning through Spark: names, missing columns, integer division, FLATTEN, formats."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from .helpers import error, names, rows


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")


def test_names_follow_the_query(conn: Any) -> None:
    sql = "SELECT EMPLOYEE_ID, employee_id, full_name AS n FROM cp.`employee.json` LIMIT 1"
    assert names(conn, sql) == ["EMPLOYEE_ID", "employee_id0", "n"]


def test_missing_columns_in_joins_are_null_ints(conn: Any, data_dir: Path) -> None:
    _write(data_dir / "pl_a.json", [{"id": 1, "x": 10}, {"id": 2, "x": 20}])
    _write(data_dir / "pl_b.json", [{"id": 1, "y": "one"}])
    cur = conn.cursor().execute(
        "SELECT a.id, a.nosuch, b.y, b.other FROM dfs.data.`pl_a.json` a "
        "LEFT JOIN dfs.data.`pl_b.json` b ON a.id = b.id ORDER BY a.id"
    )
    assert [d[0] for d in cur.description] == ["id", "nosuch", "y", "other"]
    assert cur.description[1][1] == "INTEGER"
    assert cur.fetchall() == [(1, None, "one", None), (2, None, None, None)]


def test_alias_named_like_a_column(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT CAST(employee_id AS VARCHAR) AS employee_id, COUNT(*) AS n "
        "FROM cp.`employee.json` WHERE employee_id < 3 GROUP BY employee_id ORDER BY employee_id",
    )
    assert got == [("1", 1), ("2", 1)]


def test_integer_division(conn: Any, data_dir: Path) -> None:
    _write(data_dir / "pl_div.json", [{"i": 7, "d": 7.0}])
    got = rows(conn, "SELECT i / 2, d / 2, 7 / 2, i / 2.0 FROM dfs.data.`pl_div.json`")
    assert got == [(3, 3.5, 3, 3.5)]


def test_map_members_and_flatten(conn: Any, data_dir: Path) -> None:
    _write(
        data_dir / "pl_m.json",
        [{"id": 1, "m": {"a": "x", "b": 1}, "arr": [1, 2], "tags": ["p", "q"], "kv": {"k1": 5}}],
    )
    cur = conn.cursor().execute("SELECT t.m.a, t.m.b FROM dfs.data.`pl_m.json` t")
    assert [d[0] for d in cur.description] == ["EXPR$0", "EXPR$1"]
    assert cur.fetchall() == [("x", 1)]
    got = rows(conn, "SELECT id, FLATTEN(arr) AS v FROM dfs.data.`pl_m.json` ORDER BY v")
    assert got == [(1, 1), (1, 2)]
    got = rows(
        conn, "SELECT FLATTEN(arr) AS v, FLATTEN(tags) AS g FROM dfs.data.`pl_m.json` ORDER BY v, g"
    )
    assert got == [(1, "p"), (1, "q"), (2, "p"), (2, "q")]
    got = rows(
        conn,
        "SELECT f.kv.key AS k, f.kv.`value` AS v FROM "
        "(SELECT FLATTEN(KVGEN(t.kv)) AS kv FROM dfs.data.`pl_m.json` t) f",
    )
    assert got == [("k1", 5)]


def test_to_timestamp_and_to_date_with_formats(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT TO_TIMESTAMP('05/03/2024 10:11', 'dd/MM/yyyy HH:mm') AS ts, "
        "TO_DATE('05/03/2024', 'dd/MM/yyyy') AS d FROM (VALUES(1))",
    )
    assert got == [(dt.datetime(2024, 3, 5, 10, 11), dt.date(2024, 3, 5))]


def test_to_char_of_numbers_and_dates(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT TO_CHAR(1256.789383, '#,###.###') AS n, "
        "TO_CHAR(CAST('2024-03-05' AS DATE), 'dd/MM/yyyy') AS d FROM (VALUES(1))",
    )
    assert got == [("1,256.789", "05/03/2024")]


def test_count_star_counts_rows(conn: Any) -> None:
    assert rows(conn, "SELECT COUNT(*) FROM cp.`region.json`") == [(110,)]
    assert rows(conn, "SELECT COUNT(*) AS n FROM cp.`tpch/nation.parquet`") == [(25,)]


def test_typeof_names_drill_types(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT TYPEOF(employee_id) AS a, TYPEOF(full_name) AS b, TYPEOF(salary) AS c, "
        "TYPEOF(nosuch) AS d FROM cp.`employee.json` LIMIT 1",
    )
    assert got == [("BIGINT", "VARCHAR", "FLOAT8", "NULL")]


def test_sqltypeof_and_drilltypeof_name_sql_and_drill_types(conn: Any, data_dir: Path) -> None:
    _write(data_dir / "ty.json", [{"i": 1, "s": "a", "d": 1.5, "l": [1, 2], "m": {"k": 1}}])
    got = rows(
        conn,
        "SELECT sqlTypeOf(CAST(i AS INT)) AS a, sqlTypeOf(s) AS b, sqlTypeOf(d) AS c, "
        "sqlTypeOf(CAST('2024-01-02' AS DATE)) AS e, sqlTypeOf(CAST(d AS DECIMAL(9, 2))) AS f, "
        "sqlTypeOf(l) AS g, sqlTypeOf(nosuch) AS h, "
        "drillTypeOf(CAST(i AS INT)) AS j, drillTypeOf(s) AS k, drillTypeOf(d) AS n, "
        "drillTypeOf(l) AS o, drillTypeOf(nosuch) AS p, drillTypeOf(i) AS q "
        "FROM dfs.data.`ty.json`",
    )
    assert got == [
        (
            *("INTEGER", "CHARACTER VARYING", "DOUBLE", "DATE", "DECIMAL(9, 2)", "ARRAY"),
            "INTEGER",
            *("INT", "VARCHAR", "FLOAT8", "BIGINT", "INT", "BIGINT"),
        )
    ]


def test_typeof_is_null_for_a_null_where_drilltypeof_names_the_type(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT typeof(CAST(NULL AS VARCHAR)) AS a, drillTypeOf(CAST(NULL AS VARCHAR)) AS b, "
        "sqlTypeOf(CAST(NULL AS DOUBLE)) AS c FROM (VALUES(1))",
    )
    assert got == [("NULL", "VARCHAR", "DOUBLE")]


def test_modeof_tells_arrays_nullable_columns_and_constants(conn: Any, data_dir: Path) -> None:
    _write(data_dir / "mo.json", [{"i": 1, "l": [1, 2]}])
    got = rows(
        conn,
        "SELECT modeOf(i) AS a, modeOf(l) AS b, modeOf(1 + 2) AS c, modeOf(NULL) AS d "
        "FROM dfs.data.`mo.json`",
    )
    assert got == [("NULLABLE", "ARRAY", "NOT NULL", "NULLABLE")]


def test_a_directory_of_two_formats_is_an_error_naming_both(conn: Any, tmp_path: Path) -> None:
    # Before: the JSON file beside the CSV was left out without a word (rows lost)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "a.csvh").write_text("x,y\n1,2\n")
    _write(mixed / "b.json", [{"x": "5", "y": "6"}])
    (mixed / "README").write_text("no format: passed over\n")
    msg = error(conn, f"SELECT * FROM dfs.`{mixed}`")
    assert msg.startswith("VALIDATION ERROR: ")
    assert "more than one format: csvh (a.csvh), json (b.json)" in msg
    assert f"{mixed}/*.json" in msg
    assert rows(conn, f"SELECT * FROM dfs.`{mixed}/*.json`") == [("5", "6")]
    assert rows(conn, f"SELECT * FROM dfs.`{mixed}/*.csvh`") == [("1", "2")]


def test_a_directory_of_one_format_and_unknown_files_reads_the_format(
    conn: Any, tmp_path: Path
) -> None:
    d = tmp_path / "one"
    d.mkdir()
    _write(d / "a.json", [{"x": 1}])
    (d / "b.json.gz").write_bytes(__import__("gzip").compress(b'{"x": 2}\n'))
    (d / "README").write_text("listed first, no format: passed over\n")
    (d / "notes.txt").write_text("not data\n")
    assert rows(conn, f"SELECT x FROM dfs.`{d}` ORDER BY x") == [(1,), (2,)]
