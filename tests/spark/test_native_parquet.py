"""Parquet scans on Spark's own reader, checked against the ``auger`` data source as the oracle.

Each query runs twice in one session, with ``auger.scan.native_parquet`` on and off; the
results (schema and rows) must be identical, and the plan shows which path was taken.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.errors import ErrorKind, UserError


def _plan(df: Any) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def path_of(df: Any) -> str:
    """Which path a query's scan took: ``native``, ``footer`` (a range) or ``datasource``."""
    plan = _plan(df)
    if "FileScan parquet" in plan:
        return "native"
    if "Range (" in plan:
        return "footer"
    if "LocalTableScan" in plan:
        return "local"
    return "datasource"


def _key(row: Any) -> str:
    return repr(tuple(row))


@pytest.fixture
def run(session: Any) -> Iterator[Any]:
    """run(sql, expect) -> rows: the query on both paths; results must match exactly."""
    # small files would otherwise be read on the driver, and neither path compared here be taken
    session.execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")

    def go(sql: str, expect: str = "native", ordered: bool = False) -> list[Any]:
        if expect == "datasource":  # both runs would take the same path: one is enough
            df = session.execute(sql).frame()
            assert path_of(df) == "datasource", _plan(df)
            return [tuple(r) for r in df.collect()]
        session.execute("ALTER SESSION SET `auger.scan.native_parquet` = false")
        oracle = session.execute(sql).frame()
        session.execute("ALTER SESSION SET `auger.scan.native_parquet` = true")
        native = session.execute(sql).frame()
        assert path_of(oracle) == "datasource"
        assert path_of(native) == expect, _plan(native)
        assert native.schema == oracle.schema
        want, got = oracle.collect(), native.collect()
        if not ordered:
            want, got = sorted(want, key=_key), sorted(got, key=_key)
        # repr: NaN equals NaN, and 1 never equals True or 1.0
        assert [_key(r) for r in got] == [_key(r) for r in want]
        return [tuple(r) for r in got]

    yield go
    session.execute("ALTER SESSION RESET `auger.scan.native_parquet`")
    session.execute("ALTER SESSION RESET `auger.scan.local_bytes`")


TS = dt.datetime(2021, 3, 4, 5, 6, 7, 123456)


def zoo(n: int = 3) -> pa.Table:
    """One column of each type the native path takes, with a null in every column."""

    def col(values: list[Any], t: pa.DataType) -> pa.Array:
        return pa.array([*values[: n - 1], None], t)

    return pa.table(
        {
            "id": pa.array(list(range(n)), pa.int64()),
            "i8": col([1, -2, 3], pa.int8()),
            "i16": col([1, -2, 3], pa.int16()),
            "i32": col([1, -2, 3], pa.int32()),
            "u8": col([255, 1, 2], pa.uint8()),
            "u16": col([65535, 1, 2], pa.uint16()),
            "u32": col([4294967295, 1, 2], pa.uint32()),
            "u64": col([2**64 - 1, 2**63, 2], pa.uint64()),
            "f32": col([1.5, -0.25, 3.0], pa.float32()),
            "f64": col([1.5, float("nan"), 3.0], pa.float64()),
            "b": col([True, False, True], pa.bool_()),
            "s": col(["é", "", "x y"], pa.string()),
            "ls": col(["a", "b", "c"], pa.large_string()),
            "dict": col(["p", "q", "p"], pa.string()).dictionary_encode(),
            "bin": col([b"\x00\x01", b"", b"z"], pa.binary()),
            "fbin": col([b"ab", b"cd", b"ef"], pa.binary(2)),
            "d": col(
                [dt.date(2020, 1, 2), dt.date(1500, 1, 1), dt.date(9999, 12, 31)], pa.date32()
            ),
            "ts": col([TS, dt.datetime(1600, 1, 1), TS], pa.timestamp("us")),
            "tsms": col([TS.replace(microsecond=123000), TS, TS], pa.timestamp("ms")),
            "tsz": col([TS, TS, TS], pa.timestamp("us", tz="America/New_York")),
            "dec": col(
                [decimal.Decimal("12.34"), decimal.Decimal("-0.01"), None], pa.decimal128(6, 2)
            ),
            "dec18": col([decimal.Decimal("1" * 18), None, None], pa.decimal128(18, 0)),
            "dec30": col([decimal.Decimal("1" * 30), None, None], pa.decimal128(30, 0)),
            "l": col([[1, 2], [], [None]], pa.list_(pa.int64())),
            "ll": col([[[1], []], [], [[2, 3]]], pa.list_(pa.list_(pa.int32()))),
            "m": col(
                [{"a": 1, "b": {"c": "x", "d": 2.5}}, {"a": None, "b": None}, {"a": 3, "b": None}],
                pa.struct(
                    [("a", pa.int64()), ("b", pa.struct([("c", pa.string()), ("d", pa.float64())]))]
                ),
            ),
            "ls_of_m": col([[{"k": 1}], [], [None]], pa.list_(pa.struct([("k", pa.int32())]))),
            "kv": col([[("x", 1)], [], [("y", None)]], pa.map_(pa.string(), pa.int64())),
        }
    )


@pytest.fixture(scope="module")
def zoo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("native_zoo")
    pq.write_table(zoo(), root / "zoo.parquet")
    return root


def test_null_groups_and_lists_read_as_drill_vectors_hold_them(run: Any, tmp_path: Path) -> None:
    """A null struct is a struct of null members and a null list an empty one, at any depth,
    on both paths (Drill's maps and repeated vectors are never null); a null MAP stays."""
    inner = pa.struct([("x", pa.int64()), ("ys", pa.list_(pa.string()))])
    table = pa.table(
        {
            "id": [1, 2],
            "s": pa.array([{"x": 1, "ys": ["a"]}, None], inner),
            "l": pa.array([[1, None], None], pa.list_(pa.int64())),
            "los": pa.array([[{"x": 2, "ys": None}, None], None], pa.list_(inner)),
            "mp": pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())),
        }
    )
    pq.write_table(table, tmp_path / "n.parquet")
    got = run(f"SELECT id, s, l, los FROM dfs.`{tmp_path}` ORDER BY id", ordered=True)
    empty = {"x": None, "ys": []}
    assert [tuple(_plain(v) for v in r) for r in got] == [
        (1, {"x": 1, "ys": ["a"]}, [1, None], [{"x": 2, "ys": []}, empty]),
        (2, empty, [], []),
    ]
    star = run(f"SELECT * FROM dfs.`{tmp_path}` WHERE id = 2")
    assert star[0][4] is None


def _plain(value: Any) -> Any:
    """Spark Rows as dicts, at any depth."""
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def test_type_zoo_star(run: Any, zoo_dir: Path) -> None:
    rows = run(f"SELECT * FROM dfs.`{zoo_dir}`")
    assert len(rows) == 3


def test_type_zoo_projection_and_filter(run: Any, zoo_dir: Path) -> None:
    run(f"SELECT id, ts, tsz, d, dec, l FROM dfs.`{zoo_dir}` WHERE id > 0")
    run(f"SELECT t.m.b.c AS c, t.m.a AS a FROM dfs.`{zoo_dir}` t WHERE t.m.a IS NOT NULL")
    run(f"SELECT m FROM dfs.`{zoo_dir}` t WHERE t.m.b.d > 1")
    run(f"SELECT COUNT(*) AS n, SUM(i32) AS s, MAX(u32) AS u FROM dfs.`{zoo_dir}` WHERE b")


@pytest.mark.parametrize(
    ("name", "table"),
    [
        (
            "u64",
            pa.table({"x": pa.array([{"v": 2**64 - 1}, None], pa.struct([("v", pa.uint64())]))}),
        ),
        ("ns", pa.table({"x": pa.array([1_000_000_001, 2], pa.timestamp("ns"))})),
        ("time", pa.table({"x": pa.array([dt.time(1, 2, 3), None], pa.time64("us"))})),
        ("dec40", pa.table({"x": pa.array([decimal.Decimal(1), None], pa.decimal256(40, 2))})),
    ],
)
def test_types_the_native_reader_differs_on_stay_on_the_data_source(
    run: Any, tmp_path: Path, name: str, table: pa.Table
) -> None:
    pq.write_table(table, tmp_path / f"{name}.parquet")
    run(f"SELECT x FROM dfs.`{tmp_path}`", expect="datasource")
    # ... but a query that does not read that column still goes native
    pq.write_table(table.append_column("y", pa.array([1, 2])), tmp_path / f"{name}.parquet")
    run(f"SELECT y FROM dfs.`{tmp_path}`")


def test_int96_stays_on_the_data_source(run: Any, tmp_path: Path) -> None:
    t = pa.table({"x": pa.array([TS, None], pa.timestamp("us")), "y": [1, 2]})
    pq.write_table(t, tmp_path / "i96.parquet", use_deprecated_int96_timestamps=True)
    run(f"SELECT x, y FROM dfs.`{tmp_path}`", expect="datasource")
    run(f"SELECT y FROM dfs.`{tmp_path}`")


def test_schemas_differing_per_directory(run: Any, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / "c").mkdir(parents=True)
    pq.write_table(pa.table({"x": [1, 2], "s": ["p", "q"]}), tmp_path / "a" / "1.parquet")
    pq.write_table(pa.table({"x": [3], "z": [1.5]}), tmp_path / "b" / "c" / "2.parquet")
    pq.write_table(pa.table({"s": ["top"]}), tmp_path / "0.parquet")
    run(f"SELECT * FROM dfs.`{tmp_path}`")
    run(f"SELECT x, z, s, nosuch, dir0, dir1, filename FROM dfs.`{tmp_path}` WHERE x > 1")
    rows = run(f"SELECT COUNT(*) AS n FROM dfs.`{tmp_path}` WHERE dir0 = 'b'")
    assert rows == [(1,)]


def test_widened_types_stay_on_the_data_source(run: Any, tmp_path: Path) -> None:
    pq.write_table(pa.table({"x": pa.array([1], pa.int32()), "y": [1]}), tmp_path / "1.parquet")
    pq.write_table(pa.table({"x": pa.array([2], pa.int64()), "y": [2]}), tmp_path / "2.parquet")
    run(f"SELECT x FROM dfs.`{tmp_path}`", expect="datasource")
    run(f"SELECT y FROM dfs.`{tmp_path}`")
    # an unsigned column Spark reads as BIGINT must not pass for a signed one
    pq.write_table(pa.table({"x": pa.array([2**32 - 1], pa.uint32())}), tmp_path / "1.parquet")
    assert sorted(run(f"SELECT x FROM dfs.`{tmp_path}`", expect="datasource")) == [(-1,), (2,)]


def test_struct_members_missing_in_some_files(run: Any, tmp_path: Path) -> None:
    one = pa.array([{"a": 1, "b": "x"}], pa.struct([("a", pa.int64()), ("b", pa.string())]))
    two = pa.array([{"a": 2}], pa.struct([("a", pa.int64())]))
    pq.write_table(pa.table({"m": one}), tmp_path / "1.parquet")
    pq.write_table(pa.table({"m": two}), tmp_path / "2.parquet")
    run(f"SELECT m FROM dfs.`{tmp_path}`", expect="datasource")
    run(f"SELECT t.m.a AS a FROM dfs.`{tmp_path}` t")
    run(f"SELECT t.m.b AS b FROM dfs.`{tmp_path}` t", expect="datasource")


def test_not_null_maps_whose_members_differ_between_files(run: Any, tmp_path: Path) -> None:
    def write(name: str, members: list[tuple[str, pa.DataType]], m: dict[str, Any]) -> None:
        struct = pa.struct([pa.field(n, t, nullable=False) for n, t in members])
        fields = [pa.field("id", pa.int64(), False), pa.field("m", struct, False)]
        table = pa.Table.from_pylist([{"id": len(name), "m": m}], schema=pa.schema(fields))
        pq.write_table(table, tmp_path / f"{name}.parquet")

    write("1", [("a", pa.int64()), ("b", pa.string())], {"a": 1, "b": "x"})
    write("22", [("a", pa.int64())], {"a": 2})
    pq.write_table(pa.table({"id": pa.array([3], pa.int64())}), tmp_path / "333.parquet")
    # the file without `b` and the file without `m` read NULL members, on either path
    assert sorted(run(f"SELECT * FROM dfs.`{tmp_path}`", expect="datasource")) == [
        (1, (1, "x")),
        (2, (2, None)),
        (3, (None, None)),
    ]
    got = run(f"SELECT t.id, t.m.a AS a FROM dfs.`{tmp_path}` t")
    assert sorted(got) == [(1, 1), (2, 2), (3, None)]
    got = run(f"SELECT t.id, t.m.b AS b FROM dfs.`{tmp_path}` t", expect="datasource")
    assert sorted(got) == [(1, "x"), (2, None), (3, None)]


def test_implicit_dir_and_hive_columns(run: Any, tmp_path: Path) -> None:
    for i, rel in enumerate(["year=2023/m=01", "year=2024/m=02", "year=2024"]):
        d = tmp_path / rel
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"v": [i, i + 10]}), d / f"p{i}.parquet")
    os.utime(tmp_path / "year=2024" / "p2.parquet", (1_600_000_000.5, 1_600_000_000.5))
    cols = "v, `year`, m, dir0, dir1, dir2, filename, filepath, fqn, suffix, lmt"
    run(f"SELECT {cols} FROM dfs.`{tmp_path}`")
    run(f"SELECT * FROM dfs.`{tmp_path}` WHERE `year` = '2024'")
    assert run(f"SELECT COUNT(*) FROM dfs.`{tmp_path}` WHERE dir0 = 'year=2024'") == [(4,)]


def test_odd_file_and_directory_names(run: Any, tmp_path: Path) -> None:
    names = ["a b", "100%", "plus+sign", "ünï €", "q#h&x=1", "it's"]
    for i, name in enumerate(names):
        d = tmp_path / name
        d.mkdir()
        pq.write_table(pa.table({"v": [i], "odd name": [str(i)]}), d / f"{name} {i}.parquet")
    rows = run(f"SELECT v, `odd name`, dir0, filename, fqn FROM dfs.`{tmp_path}`")
    assert {r[2] for r in rows} == set(names)


def test_names_spark_would_glob_stay_on_the_data_source(run: Any, tmp_path: Path) -> None:
    pq.write_table(pa.table({"v": [1]}), tmp_path / "a[1].parquet")
    run(f"SELECT v, filename FROM dfs.`{tmp_path}`", expect="datasource")


def test_provided_schema_over_parquet(run: Any, tmp_path: Path) -> None:
    pq.write_table(pa.table({"a": [1, 2], "b": ["x", None]}), tmp_path / "1.parquet")
    (tmp_path / ".drill.schema").write_text(
        '{"table": "t", "schema": {"columns": ['
        '{"name": "a", "type": "BIGINT", "mode": "OPTIONAL"},'
        '{"name": "extra", "type": "INT", "mode": "REQUIRED", "properties": '
        '{"drill.default": "7"}},'
        '{"name": "txt", "type": "VARCHAR", "mode": "OPTIONAL"}]}}'
    )
    rows = run(f"SELECT * FROM dfs.`{tmp_path}`")
    assert rows and rows[0][1] == 7


def test_provided_schema_changing_a_type_stays_on_the_data_source(run: Any, tmp_path: Path) -> None:
    pq.write_table(pa.table({"a": [1, 2]}), tmp_path / "1.parquet")
    (tmp_path / ".drill.schema").write_text(
        '{"table": "t", "schema": {"columns": [{"name": "a", "type": "VARCHAR"}]}}'
    )
    run(f"SELECT a FROM dfs.`{tmp_path}`", expect="datasource")


def test_count_star_from_footers(run: Any, session: Any, tmp_path: Path) -> None:
    for d in ("x", "y"):
        (tmp_path / d).mkdir()
        pq.write_table(
            pa.table({"v": list(range(5))}), tmp_path / d / "p.parquet", row_group_size=2
        )
    assert run(f"SELECT COUNT(*) AS n FROM dfs.`{tmp_path}`", expect="footer") == [(10,)]
    # pruning on dir0 happens before the scan: only one file's footer is counted
    rows = run(f"SELECT COUNT(*) FROM dfs.`{tmp_path}` WHERE dir0 = 'y'", expect="native")
    assert rows == [(5,)]
    session.execute("ALTER SESSION SET `auger.scan.local_limit_rows` = 0")
    try:
        rows = run(f"SELECT 1 AS one FROM dfs.`{tmp_path}` LIMIT 3", expect="footer")
    finally:
        session.execute("ALTER SESSION RESET `auger.scan.local_limit_rows`")
    assert rows == [(1,)] * 3


def test_limit(run: Any, session: Any, tmp_path: Path) -> None:
    pq.write_table(pa.table({"v": list(range(100))}), tmp_path / "p.parquet")
    sql = f"SELECT * FROM dfs.`{tmp_path}` LIMIT 7"
    # a small LIMIT is read on the driver, before the native path is asked
    assert path_of(session.execute(sql).frame()) == "local"
    session.execute("ALTER SESSION SET `auger.scan.local_limit_rows` = 0")
    try:
        assert len(run(sql, ordered=True)) == 7
    finally:
        session.execute("ALTER SESSION RESET `auger.scan.local_limit_rows`")


def test_empty_selection(run: Any, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    pq.write_table(pa.table({"v": pa.array([], pa.int64())}), tmp_path / "empty" / "p.parquet")
    assert run(f"SELECT v FROM dfs.`{tmp_path}/empty`") == []
    assert run(f"SELECT COUNT(*) FROM dfs.`{tmp_path}/empty`", expect="footer") == [(0,)]


def test_corrupt_data_page_is_a_data_read_error(session: Any, tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"v": list(range(10_000))}), path, compression="snappy")
    raw = bytearray(path.read_bytes())
    for i in range(200, 2000):  # the first data page, well before the footer
        raw[i] = 0xFF
    path.write_bytes(bytes(raw))
    result = session.execute(f"SELECT SUM(v) FROM dfs.`{tmp_path}`")
    assert path_of(result.frame()) == "native"
    with pytest.raises(UserError) as info:
        result.to_arrow()
    assert info.value.kind is ErrorKind.DATA_READ
    assert f"File: {path}" in info.value.context


def test_more_files_than_spark_lists_on_the_driver_stay_on_the_data_source(
    run: Any, tmp_path: Path
) -> None:
    # Spark lists the paths it is given again, more than 32 of them (its parallel discovery
    # threshold) by a job of a task a path: the data source takes auger's listing instead
    for i in range(33):
        pq.write_table(pa.table({"v": [i]}), tmp_path / f"p{i:02d}.parquet")
    rows = run(f"SELECT v FROM dfs.`{tmp_path}`", expect="datasource")
    assert sorted(r[0] for r in rows) == list(range(33))
    os.remove(tmp_path / "p32.parquet")
    rows = run(f"SELECT v FROM dfs.`{tmp_path}`")  # 32: listed on the driver, native
    assert sorted(r[0] for r in rows) == list(range(32))
