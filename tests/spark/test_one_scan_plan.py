"""SQL and ``spark.read.format("auger")`` plan their scans with one function: the same files,
projection and options give the same columns, types, rows and errors both ways."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.errors import ErrorKind, UserError
from auger.spark.errors import unwrap_spark_error

pytestmark = pytest.mark.spark

Outcome = tuple[Any, ...]


def outcome(make: Callable[[], Any]) -> Outcome:
    """("rows", [(name, type)...], sorted rows) or ("error", kind, message)."""
    try:
        df = make()
        fields = [(f.name, f.dataType.simpleString()) for f in df.schema.fields]
        return ("rows", fields, sorted((tuple(r) for r in df.collect()), key=repr))
    except Exception as exc:  # either way's error is the result compared
        err = exc if isinstance(exc, UserError) else unwrap_spark_error(exc)
        return ("error", err.kind, err.message)


def through_sql(conn: Any, sql: str) -> Outcome:
    return outcome(lambda: conn.session.execute(sql).frame())


def through_reader(spark: Any, path: Path, **options: str) -> Outcome:
    def make() -> Any:
        reader = spark.read.format("auger")
        for key, value in options.items():
            reader = reader.option(key, value)
        return reader.load(str(path))

    return outcome(make)


def both(conn: Any, spark: Any, sql: str, path: Path, **options: str) -> Outcome:
    by_sql = through_sql(conn, sql)
    by_reader = through_reader(spark, path, **options)
    assert by_sql == by_reader
    return by_sql


def test_a_directory_of_two_formats_is_the_same_error_both_ways(
    conn: Any, spark: Any, tmp_path: Path
) -> None:
    d = tmp_path / "mixed"
    d.mkdir()
    (d / "a.csv").write_text("1,x\n")
    (d / "b.json").write_text('{"a": 1}\n')
    (d / "README").write_text("no table data: passed over\n")
    got = both(conn, spark, f"SELECT * FROM dfs.`{d}`", d)
    assert got[0] == "error" and got[1] is ErrorKind.VALIDATION
    assert "holds files of more than one format" in got[2]
    assert "csv (a.csv)" in got[2] and "json (b.json)" in got[2]
    # naming the format does not make the other format's files disappear either
    named = through_reader(spark, d, format="csv")
    assert named[:2] == ("error", ErrorKind.VALIDATION) and "b.json" in named[2]


def test_implicit_and_partition_columns(conn: Any, spark: Any, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    for year in ("2023", "2024"):
        (logs / year).mkdir(parents=True)
        (logs / year / "p.json").write_text(json.dumps({"id": int(year)}) + "\n")
    (logs / "top.json").write_text('{"id": 1}\n')
    got = both(conn, spark, f"SELECT * FROM dfs.`{logs}`", logs)
    assert got[1] == [("id", "bigint"), ("dir0", "string")]
    assert got[2] == [(1, None), (2023, "2023"), (2024, "2024")]
    sql = f"SELECT id, filename, suffix, dir0 FROM dfs.`{logs}`"
    got = both(conn, spark, sql, logs, columns="id, filename, suffix, dir0")
    assert got[2][-1] == (2024, "p.json", "json", "2024")


def test_parquet_wildcard_puts_partition_columns_first(
    conn: Any, spark: Any, tmp_path: Path
) -> None:
    sales = tmp_path / "sales"
    for region in ("eu", "us"):
        (sales / f"region={region}").mkdir(parents=True)
        pq.write_table(pa.table({"amount": [1.5]}), sales / f"region={region}" / "p.parquet")
    got = both(conn, spark, f"SELECT * FROM dfs.`{sales}`", sales)
    assert [name for name, _ in got[1]] == ["dir0", "region", "amount"]


def test_missing_columns_are_typed_nulls_and_text_blanks(
    conn: Any, spark: Any, tmp_path: Path
) -> None:
    (tmp_path / "m.json").write_text('{"a": 1, "b": "x"}\n{"a": 2}\n')
    got = both(
        conn,
        spark,
        f"SELECT b, nosuch, a FROM dfs.`{tmp_path}/m.json`",
        tmp_path / "m.json",
        columns="b, nosuch, a",
    )
    assert got[1] == [("b", "string"), ("nosuch", "int"), ("a", "bigint")]
    (tmp_path / "h.csvh").write_text("region,qty\neu,1\n")
    got = both(
        conn,
        spark,
        f"SELECT regoin, qty FROM dfs.`{tmp_path}/h.csvh`",
        tmp_path / "h.csvh",
        columns="regoin, qty",
    )
    assert got[2] == [("", "1")]


def test_provided_schema(conn: Any, spark: Any, data_dir: Path) -> None:
    table = data_dir / "one_plan_provided"
    table.mkdir()
    (table / "p.json").write_text('{"id": 1, "name": "ann"}\n{"id": 2}\n')
    conn.cursor().execute(
        "CREATE OR REPLACE SCHEMA (id DOUBLE, extra VARCHAR) FOR TABLE dfs.data.`one_plan_provided`"
    )
    got = both(conn, spark, f"SELECT * FROM dfs.`{table}`", table)
    assert got[1] == [("id", "double"), ("extra", "string"), ("name", "string")]
    assert got[2] == [(1.0, None, "ann"), (2.0, None, None)]


def test_provided_schema_types_text_both_ways(conn: Any, spark: Any, data_dir: Path) -> None:
    # The scan converts text under a provided schema, so a plain read gets typed columns too
    # (before: the reader gave the text the files hold; only SQL converted it)
    table = data_dir / "one_plan_text_typed"
    table.mkdir()
    (table / "a.csvh").write_text("id,day,ok,note\n 1 ,01/02/2019,yes,x\n2,,foo,\n,31/12/2020,,y\n")
    (table / "b.csvh").write_text("id\n7\n")
    conn.cursor().execute(
        "CREATE OR REPLACE SCHEMA (id INT NOT NULL DEFAULT '-1', day DATE FORMAT 'dd/MM/yyyy', "
        "ok BOOLEAN, note VARCHAR NOT NULL DEFAULT 'none') "
        "FOR TABLE dfs.data.`one_plan_text_typed`"
    )
    got = both(conn, spark, f"SELECT * FROM dfs.`{table}`", table)
    assert got[1] == [("id", "int"), ("day", "date"), ("ok", "boolean"), ("note", "string")]
    assert got[2] == sorted(
        [
            (1, dt.date(2019, 2, 1), True, "x"),
            (2, None, False, ""),
            (-1, dt.date(2020, 12, 31), None, "y"),
            (7, None, None, "none"),
        ],
        key=repr,
    )
    (table / "c.csvh").write_text("id\nseven\n")
    got = both(conn, spark, f"SELECT id FROM dfs.`{table}`", table, columns="id")
    assert got[:2] == ("error", ErrorKind.DATA_READ)
    assert got[2].startswith("Illegal conversion: Column `id` of type INT, Illegal value `seven`")


def test_a_conflict_fails_only_the_query_that_reads_it(
    conn: Any, spark: Any, tmp_path: Path
) -> None:
    d = tmp_path / "conflict"
    d.mkdir()
    pq.write_table(pa.table({"id": [1], "c": [1]}), d / "a.parquet")
    pq.write_table(pa.table({"id": [2], "c": ["two"]}), d / "b.parquet")
    got = both(conn, spark, f"SELECT id FROM dfs.`{d}`", d, columns="id")
    assert got[2] == [(1,), (2,)]
    got = both(conn, spark, f"SELECT c FROM dfs.`{d}`", d, columns="c")
    assert got[:2] == ("error", ErrorKind.DATA_READ)
    assert "[c]" in got[2] and "BIGINT" in got[2] and "VARCHAR" in got[2]


def test_json_inner_list_conflict_fails_only_readers_of_it_both_ways(
    conn: Any, spark: Any, tmp_path: Path
) -> None:
    # Drill's case: inner_list is BIGINT in one record and VARCHAR in the next
    d = tmp_path / "inner_list"
    d.mkdir()
    records = [{"id": 1, "inner_list": 5, "m": {"a": 1, "b": 2}}]
    records.append({"id": 2, "inner_list": "x", "m": {"a": 2, "b": "y"}})
    (d / "a.json").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    got = both(conn, spark, f"SELECT id FROM dfs.`{d}`", d, columns="id")
    assert got == ("rows", [("id", "bigint")], [(1,), (2,)])
    # a member the query reads beside a conflicting one it does not
    got = through_sql(conn, f"SELECT t.id, t.m.a FROM dfs.`{d}` t")
    assert got[0] == "rows" and got[2] == [(1, 1), (2, 2)]
    got = through_reader(spark, d, columns="id, m.a")
    assert got[0] == "rows" and [(i, m["a"]) for i, m in got[2]] == [(1, 1), (2, 2)]
    got = both(conn, spark, f"SELECT inner_list FROM dfs.`{d}`", d, columns="inner_list")
    assert got[:2] == ("error", ErrorKind.DATA_READ)
    assert got[2].startswith("JSON column [inner_list] changes type")
    got = through_reader(spark, d)
    assert got[:2] == ("error", ErrorKind.DATA_READ) and "[inner_list]" in got[2]
    got = through_reader(spark, d, columns="id, m.b")
    assert got[:2] == ("error", ErrorKind.DATA_READ) and "[m.b]" in got[2]


def test_parquet_contributions_decimal_and_double_both_ways(
    conn: Any, spark: Any, tmp_path: Path
) -> None:
    # Drill's case: contributions is DECIMAL in one file and DOUBLE in another
    import decimal

    d = tmp_path / "contributions"
    d.mkdir()
    decimals = pa.array([decimal.Decimal("1.50")], pa.decimal128(10, 2))
    pq.write_table(pa.table({"id": [1], "contributions": decimals}), d / "a.parquet")
    pq.write_table(pa.table({"id": [2], "contributions": [2.5]}), d / "b.parquet")
    got = both(conn, spark, f"SELECT id FROM dfs.`{d}`", d, columns="id")
    assert got == ("rows", [("id", "bigint")], [(1,), (2,)])
    sql = f"SELECT contributions FROM dfs.`{d}`"
    got = both(conn, spark, sql, d, columns="contributions")
    assert got[:2] == ("error", ErrorKind.DATA_READ)
    assert "Column [contributions] has type" in got[2]
    assert "DECIMAL(10, 2)" in got[2] and "DOUBLE" in got[2]


def test_a_type_change_past_the_sample_in_an_unread_column_both_ways(
    conn: Any, spark: Any, tmp_path: Path
) -> None:
    # the schema sample (1,000 records) never sees the strings; only a reader of x does
    d = tmp_path / "late"
    d.mkdir()
    records = [{"id": i, "x": i if i < 1200 else "text"} for i in range(1500)]
    (d / "a.json").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    got = both(conn, spark, f"SELECT id FROM dfs.`{d}`", d, columns="id")
    assert got[0] == "rows" and len(got[2]) == 1500
    got = both(conn, spark, f"SELECT x FROM dfs.`{d}`", d, columns="x")
    assert got[:2] == ("error", ErrorKind.DATA_READ)
