"""The ``auger`` data source in plain PySpark: Drill semantics, exact Arrow types, tasks."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.spark.errors import unwrap_spark_error


def load(spark: Any, path: Path | str, **options: object) -> Any:
    reader = spark.read.format("auger")
    for k, v in options.items():
        reader = reader.option(k, str(v).lower() if isinstance(v, bool) else str(v))
    return reader.load(str(path))


def test_headerless_csv_is_a_columns_array(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("1,x\n2,y,extra\n")
    df = load(spark, tmp_path / "a.csv", format="csv")
    assert df.columns == ["columns"]
    assert [r[0] for r in df.collect()] == [["1", "x"], ["2", "y", "extra"]]


def test_header_and_delimiter_options(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "h.csv").write_text("id|name|tag\n1|ann|z\n2|bob|w\n")
    df = load(spark, tmp_path / "h.csv", format="csv", extract_header=True, delimiter="|")
    assert df.columns == ["id", "name", "tag"]
    assert [tuple(r) for r in df.collect()] == [("1", "ann", "z"), ("2", "bob", "w")]


def test_directories_give_dir_columns_and_implicit_columns_on_request(
    spark: Any, tmp_path: Path
) -> None:
    for year, month in (("2023", "01"), ("2024", "02")):
        d = tmp_path / "logs" / year / month
        d.mkdir(parents=True)
        (d / "p.json").write_text(json.dumps({"id": int(year), "m": {"a": month}}) + "\n")
    (tmp_path / "logs" / "top.json").write_text('{"id": 1}\n')
    df = load(spark, tmp_path / "logs", format="json")
    assert df.columns == ["id", "m", "dir0", "dir1"]
    got = sorted(tuple(r) for r in df.select("id", "dir0", "dir1").collect())
    assert got == [(1, None, None), (2023, "2023", "01"), (2024, "2024", "02")]
    df2 = load(spark, tmp_path / "logs", format="json", implicit_columns="filename,fqn")
    assert df2.columns[-2:] == ["filename", "fqn"]
    fqns = {r.fqn for r in df2.collect()}
    assert str(tmp_path / "logs" / "2023" / "01" / "p.json") in fqns
    assert {r.filename for r in df2.collect()} == {"p.json", "top.json"}


def test_projection_option_with_missing_columns(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "m.json").write_text('{"a": 1, "b": "x"}\n{"a": 2}\n')
    df = load(spark, tmp_path / "m.json", format="json", columns="b, nosuch, a")
    assert df.columns == ["b", "nosuch", "a"]
    assert df.schema["nosuch"].dataType.typeName() == "integer"
    assert [tuple(r) for r in df.collect()] == [("x", None, 1), (None, None, 2)]


def test_hive_style_directories_give_key_columns(spark: Any, tmp_path: Path) -> None:
    for region in ("eu", "us"):
        d = tmp_path / "sales" / f"region={region}"
        d.mkdir(parents=True)
        pq.write_table(pa.table({"amount": [1.5, 2.5]}), d / "part-0.parquet")
    df = load(spark, tmp_path / "sales", format="parquet")
    assert df.columns == ["dir0", "region", "amount"]  # Drill's Parquet wildcard, as in SQL
    got = sorted((r.region, r.dir0, r.amount) for r in df.collect())
    assert got[0] == ("eu", "region=eu", 1.5) and got[-1] == ("us", "region=us", 2.5)


def test_format_from_extension_and_user_schema(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "u.json").write_text('{"a": 1, "b": 2}\n{"a": 3}\n')
    assert load(spark, tmp_path / "u.json").columns == ["a", "b"]
    df = (
        spark.read.format("auger")
        .schema("b double, a string, zz int")
        .load(str(tmp_path / "u.json"))
    )
    assert [tuple(r) for r in df.collect()] == [(2.0, "1", None), (None, "3", None)]


AWKWARD = pa.schema(
    [
        ("dec", pa.decimal128(12, 3)),
        ("d", pa.date32()),
        ("ts", pa.timestamp("us")),
        ("tsz", pa.timestamp("ms", tz="America/New_York")),
        ("tns", pa.timestamp("ns")),
        ("t", pa.time64("us")),
        ("s", pa.struct([("x", pa.int32()), ("y", pa.list_(pa.string()))])),
        ("l", pa.list_(pa.int64())),
        ("mp", pa.map_(pa.string(), pa.int64())),
        ("allnull", pa.int32()),
        ("i8", pa.int8()),
        ("f4", pa.float32()),
        ("b", pa.binary()),
        ("big", pa.large_string()),
    ]
)


def _awkward_table() -> pa.Table:
    return pa.table(
        {
            "dec": [decimal.Decimal("1.250"), None],
            "d": [dt.date(2024, 2, 29), None],
            "ts": [dt.datetime(2024, 1, 2, 3, 4, 5, 6000), None],
            "tsz": [dt.datetime(2024, 6, 1, 12, 0, tzinfo=dt.UTC), None],
            "tns": [dt.datetime(2020, 1, 1, 0, 0, 1), None],
            "t": [dt.time(13, 14, 15, 500000), None],
            "s": [{"x": 1, "y": ["a", None]}, None],
            "l": [[1, None, 3], []],
            "mp": [[("k", 1)], None],
            "allnull": [None, None],
            "i8": [-5, 7],
            "f4": [1.5, None],
            "b": [b"\x00\x01", None],
            "big": ["big", None],
        },
        schema=AWKWARD,
    )


def test_awkward_parquet_types_arrive_exactly(spark: Any, tmp_path: Path) -> None:
    pq.write_table(_awkward_table(), tmp_path / "awk.parquet")
    df = load(spark, tmp_path / "awk.parquet", format="parquet")
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types["dec"] == "decimal(12,3)"
    assert types["d"] == "date"
    assert types["ts"] == types["tsz"] == "timestamp_ntz"
    assert types["tns"] == "bigint"  # nanoseconds since the epoch, as Drill reads them
    assert types["t"] == "string"  # Spark has no TIME: Drill's text form travels
    assert types["s"] == "struct<x:int,y:array<string>>"
    assert types["mp"].startswith("map<string,bigint>")
    rows = df.collect()
    first = rows[0].asDict(recursive=True)
    assert first["dec"] == decimal.Decimal("1.250")
    assert first["d"] == dt.date(2024, 2, 29)
    assert first["ts"] == dt.datetime(2024, 1, 2, 3, 4, 5, 6000)
    assert first["tsz"] == dt.datetime(2024, 6, 1, 12, 0)  # the UTC instant, zone-less
    assert first["tns"] == 1_577_836_801_000_000_000
    assert first["t"].startswith("13:14:15.5")
    assert first["s"] == {"x": 1, "y": ["a", None]}
    assert first["l"] == [1, None, 3]
    assert first["mp"] == {"k": 1}
    assert first["allnull"] is None and first["i8"] == -5 and first["f4"] == 1.5
    assert first["b"] == bytearray(b"\x00\x01") and first["big"] == "big"
    second = rows[1].asDict(recursive=True)
    # a null struct is a struct of nulls (Drill's maps are never null); a null map stays
    assert second["l"] == [] and second["s"] == {"x": None, "y": []} and second["mp"] is None


def test_empty_files_give_empty_results_with_the_schema(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text("")
    assert load(spark, tmp_path / "e.csv", format="csv").collect() == []
    pq.write_table(pa.table({"a": pa.array([], pa.int64())}), tmp_path / "e.parquet")
    df = load(spark, tmp_path / "e.parquet")
    assert df.columns == ["a"] and df.count() == 0


def test_files_conform_to_the_discovered_schema(spark: Any, tmp_path: Path) -> None:
    d = tmp_path / "mixed"
    d.mkdir()
    pq.write_table(pa.table({"a": pa.array([1], pa.int32())}), d / "1.parquet")
    pq.write_table(pa.table({"a": pa.array([2], pa.int64()), "b": ["x"]}), d / "2.parquet")
    df = load(spark, d)
    assert df.schema["a"].dataType.typeName() == "long"
    assert sorted(tuple(r) for r in df.collect()) == [(1, None), (2, "x")]


def test_a_big_parquet_file_becomes_several_tasks(spark: Any, tmp_path: Path) -> None:
    n = 300_000
    pq.write_table(
        pa.table({"a": pa.array(range(n), pa.int64())}),
        tmp_path / "big.parquet",
        row_group_size=50_000,
    )
    df = load(spark, tmp_path / "big.parquet", **{"auger.scan.target_split_bytes": 200_000})
    assert df.rdd.getNumPartitions() >= 2
    assert df.count() == n
    assert df.agg({"a": "sum"}).collect()[0][0] == n * (n - 1) // 2


def test_pushed_filters_skip_files_and_row_groups_but_keep_answers(
    spark: Any, tmp_path: Path
) -> None:
    root = tmp_path / "tree"
    for year in ("2022", "2023", "2024"):
        (root / year).mkdir(parents=True)
        pq.write_table(
            pa.table({"v": list(range(0, 1000))}), root / year / "p.parquet", row_group_size=100
        )
    df = load(spark, root, pushdown=True)
    got = df.filter("dir0 = '2023' AND v >= 990").collect()
    assert sorted((r.dir0, r.v) for r in got) == [("2023", v) for v in range(990, 1000)]
    # With a given schema nothing is read at load time; a broken file in 2022 then fails any
    # query that opens it, so this one succeeding shows the pushed filter skipped it.
    (root / "2022" / "broken.parquet").write_bytes(b"not parquet at all")
    given = spark.read.format("auger").option("pushdown", "true").schema("v bigint, dir0 string")
    got = given.load(str(root)).filter("dir0 = '2023' AND v >= 998").collect()
    assert sorted((r.dir0, r.v) for r in got) == [("2023", 998), ("2023", 999)]
    with pytest.raises(Exception) as info:
        given.load(str(root)).filter("v >= 998").collect()
    assert "broken.parquet" in str(unwrap_spark_error(info.value))
    (root / "2022" / "broken.parquet").unlink()
    # OR, IN and negation still give exact answers
    got = df.filter("dir0 IN ('2022', '2024') AND (v = 5 OR v = 999)").collect()
    assert sorted((r.dir0, r.v) for r in got) == [
        ("2022", 5),
        ("2022", 999),
        ("2024", 5),
        ("2024", 999),
    ]
    assert df.filter("dir0 <> '2023'").count() == 2000


def test_pushdown_reader_partitions_skip_what_cannot_match(tmp_path: Path) -> None:
    from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual

    from auger.spark.datasource import AugerDataSource

    root = tmp_path / "tree"
    for year in ("2022", "2023"):
        (root / year).mkdir(parents=True)
        pq.write_table(
            pa.table({"v": list(range(1000))}), root / year / "p.parquet", row_group_size=100
        )
    ds = AugerDataSource({"path": str(root), "format": "parquet", "pushdown": "true"})
    schema = ds.schema()
    reader = ds.reader(schema)
    filters = [EqualTo(("dir0",), "2023"), GreaterThanOrEqual(("v",), 950)]
    assert list(reader.pushFilters(filters)) == filters  # Spark still applies them all
    parts = reader.partitions()
    splits = [s for p in parts for s in p.files]
    assert [s.path for s in splits] == [str(root / "2023" / "p.parquet")]
    assert splits[0].row_groups == (9,)


def test_count_star_through_sql_uses_row_counts_per_task(conn: Any, data_dir: Path) -> None:
    root = data_dir / "counted"
    for region, n in (("eu", 12_345), ("us", 7_000)):
        d = root / f"region={region}"
        d.mkdir(parents=True)
        pq.write_table(
            pa.table({"v": pa.array(range(n), pa.int64())}), d / "p.parquet", row_group_size=1000
        )
    cur = conn.cursor()
    assert cur.execute("SELECT COUNT(*) FROM dfs.data.`counted`").fetchall() == [(19_345,)]
    got = cur.execute(
        "SELECT region, COUNT(*) AS n FROM dfs.data.`counted` GROUP BY region ORDER BY region"
    ).fetchall()
    assert got == [("eu", 12_345), ("us", 7_000)]
    got = cur.execute("SELECT COUNT(*) FROM dfs.data.`counted` WHERE v >= 6500").fetchall()
    assert got == [(12_345 - 6_500 + 500,)]
