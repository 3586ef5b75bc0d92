"""Small pushed LIMITs are read on the driver: same rows, types and errors as the data source."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from auger.errors import ErrorKind, UserError


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("local_limit")
    for year in ("2023", "2024"):
        d = root / "csv" / year
        d.mkdir(parents=True)
        (d / "a.csv").write_text("".join(f"{year},{i},x{i}\n" for i in range(30)))
        j = root / "json" / year
        j.mkdir(parents=True)
        rows = [{"id": i, "m": {"a": i, "b": [i, i + 1]}, "s": f"v{i}"} for i in range(30)]
        (j / "a.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        h = root / "csvh" / year
        h.mkdir(parents=True)
        (h / "a.csvh").write_text("k,v\n" + "".join(f"{i},{year}\n" for i in range(30)))
    bad = root / "bad"
    bad.mkdir()
    (bad / "a.json").write_text('{"a": 1}\n{"a": \n')
    return root


def _frame(conn: Any, sql: str, local_rows: int) -> Any:
    conn.cursor().execute(f"ALTER SESSION SET `auger.scan.local_limit_rows` = {local_rows}")
    conn.cursor().execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")  # LIMITs only
    return conn.session.execute(sql).frame()


def _is_local(df: Any) -> bool:
    return "LocalRelation" in df._jdf.queryExecution().optimizedPlan().toString()


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM dfs.`{root}/csv` LIMIT 5",
        "SELECT columns[2] AS c, dir0, filename FROM dfs.`{root}/csv` LIMIT 3",
        "SELECT * FROM dfs.`{root}/json` LIMIT 7",
        "SELECT t.m.a, t.m.b[1] AS b1, nope FROM dfs.`{root}/json` t LIMIT 4",
        "SELECT k, CAST(v AS INT) + 1 AS v1, dir0 FROM dfs.`{root}/csvh` LIMIT 40",
        "SELECT * FROM dfs.`{root}/csv` LIMIT 0",
    ],
)
def test_local_limit_equals_the_data_source(conn: Any, tree: Path, query: str) -> None:
    sql = query.format(root=tree)
    local = _frame(conn, sql, 10_000)
    remote = _frame(conn, sql, 0)
    assert _is_local(local)
    if not sql.endswith("LIMIT 0"):  # Spark itself turns LIMIT 0 into an empty local relation
        assert not _is_local(remote)
    assert local.schema == remote.schema
    assert local.collect() == remote.collect()


def test_limit_above_the_option_runs_in_spark(conn: Any, tree: Path) -> None:
    df = _frame(conn, f"SELECT * FROM dfs.`{tree}/csv` LIMIT 50", 20)
    assert not _is_local(df)
    assert len(df.collect()) == 50


def test_unpushable_limit_is_not_read_locally(conn: Any, tree: Path) -> None:
    sql = f"SELECT COUNT(*) AS n FROM dfs.`{tree}/csv` WHERE columns[1] = '3' LIMIT 5"
    df = _frame(conn, sql, 10_000)
    assert not _is_local(df)
    assert df.collect()[0][0] == 2


def test_local_read_error_is_the_users(conn: Any, tree: Path) -> None:
    df = _frame(conn, f"SELECT * FROM dfs.`{tree}/csv` LIMIT 5", 10_000)
    assert _is_local(df)
    with pytest.raises(UserError) as err:
        conn.session.execute(f"SELECT * FROM dfs.`{tree}/bad` LIMIT 5").to_arrow()
    assert err.value.kind is ErrorKind.DATA_READ
    assert any("a.json" in c for c in err.value.context)


# ------------------------------------------------- SELECT * ... LIMIT n answered on the driver
@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Files of many types, for comparing the driver's answer with Spark's, type by type."""
    import datetime as dt
    from decimal import Decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    root = tmp_path_factory.mktemp("local_answer")
    (root / "pq" / "d1").mkdir(parents=True)
    n = 6
    table = pa.table(
        {
            "i8": pa.array([1, None, -3, 4, 5, 6], pa.int8()),
            "i32": pa.array(range(n), pa.int32()),
            "i64": pa.array([2**40 + i for i in range(n)], pa.int64()),
            "f32": pa.array([1.5, None, float("nan"), 0.0, -2.25, 1e30], pa.float32()),
            "f64": pa.array([0.1 * i for i in range(n)], pa.float64()),
            "b": pa.array([True, False, None, True, False, True]),
            "s": pa.array(["a", "é", None, "", "x y", "z"]),
            "bin": pa.array([b"\x00\x01", None, b"", b"a", b"b", b"c"]),
            "d": pa.array([dt.date(2024, 1, i + 1) for i in range(n)], pa.date32()),
            "ts": pa.array(
                [dt.datetime(2024, 3, 1, 12, 0, i) for i in range(n)], pa.timestamp("ms")
            ),
            "dec": pa.array(
                [Decimal("1.25"), None] + [Decimal(i) for i in range(4)], pa.decimal128(10, 2)
            ),
            "l": pa.array([[1, 2], [], None, [3], [None, 4], [5]], pa.list_(pa.int64())),
            "st": pa.array(
                [{"a": i, "b": [f"v{i}"]} for i in range(n)],
                pa.struct([("a", pa.int64()), ("b", pa.list_(pa.string()))]),
            ),
            "mp": pa.array([[("k", i)] for i in range(n)], pa.map_(pa.string(), pa.int64())),
        }
    )
    pq.write_table(table, root / "pq" / "d1" / "a.parquet")
    (root / "js").mkdir()
    rows = [
        {"id": 1, "m": {"a": 1, "b": [1.5, 2.5]}, "t": True, "l": [{"x": "a"}]},
        {"id": None, "m": None, "t": None, "l": []},
        {"id": 3, "m": {"a": None, "c": "new"}, "t": False, "extra": 9.5},
    ]
    (root / "js" / "a.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (root / "txt").mkdir()
    (root / "txt" / "a.csv").write_text('1,"quoted, field",\n2,,x\n')
    (root / "txt" / "b.csvh").write_text("k,k,\n1,2,3\n")
    return root


STAR_LIMITS = [
    "SELECT * FROM dfs.`{root}/pq` LIMIT 10",
    "SELECT * FROM dfs.`{root}/pq` LIMIT 2",
    "SELECT * FROM dfs.`{root}/js` LIMIT 10",
    "SELECT * FROM dfs.`{root}/js` t LIMIT 1",
    "SELECT * FROM dfs.`{root}/txt/a.csv` LIMIT 10",
    "SELECT * FROM dfs.`{root}/txt/b.csvh` LIMIT 10",
    "SELECT * FROM dfs.`{root}/pq` LIMIT 0",
    "select * from table(dfs.`{root}/txt/a.csv`(type => 'text', fieldDelimiter => ',')) limit 5",
    # no LIMIT: the whole of the files is the answer
    "SELECT * FROM dfs.`{root}/pq`",
    "SELECT * FROM dfs.`{root}/js`",
    "SELECT * FROM dfs.`{root}/txt/a.csv`",
    "SELECT * FROM dfs.`{root}/txt/b.csvh`",
]


def _values(table: Any) -> list[Any]:
    """Column values, NaN made comparable (NaN != NaN would fail equal tables)."""
    return [
        ["NaN" if isinstance(v, float) and v != v else v for v in col.to_pylist()]
        for col in table.columns
    ]


@pytest.mark.parametrize("query", STAR_LIMITS)
def test_star_limit_is_answered_on_the_driver_as_spark_would(
    session: Any, zoo: Path, query: str
) -> None:
    from auger.sql.result import QueryResult

    sql = query.format(root=zoo)
    answered = session.execute(sql)
    assert answered.dataframe is None and answered.table is not None  # no Spark job
    spark_table = answered.frame().toArrow()  # the same query's DataFrame, run by Spark
    assert answered.table.schema.equals(spark_table.schema, check_metadata=True)
    assert _values(answered.table) == _values(spark_table)
    assert answered.schema == QueryResult(dataframe=answered.frame()).schema
    session.execute("ALTER SESSION SET `auger.scan.local_limit_rows` = 0")
    session.execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")
    session.execute("ALTER SESSION SET `auger.scan.local_answer_bytes` = 0")
    try:
        remote = session.execute(sql)  # the data source on executors
        assert remote.table is None
        assert _values(remote.to_arrow()) == _values(answered.table)
        assert remote.schema == answered.schema
    finally:
        session.execute("ALTER SESSION RESET `auger.scan.local_limit_rows`")
        session.execute("ALTER SESSION RESET `auger.scan.local_bytes`")
        session.execute("ALTER SESSION RESET `auger.scan.local_answer_bytes`")


def test_star_limit_through_the_dbapi(conn: Any, zoo: Path) -> None:
    sql = f"SELECT * FROM dfs.`{zoo}/js` LIMIT 3"
    local = conn.cursor().execute(sql)
    local_desc, local_rows = local.description, local.fetchall()
    conn.cursor().execute("ALTER SESSION SET `auger.scan.local_limit_rows` = 0")
    conn.cursor().execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")
    conn.cursor().execute("ALTER SESSION SET `auger.scan.local_answer_bytes` = 0")
    remote = conn.cursor().execute(sql)
    assert remote.description == local_desc
    assert remote.fetchall() == local_rows
    assert len(local_rows) == 3
    assert conn.sql(sql).count() == 3  # a DataFrame is still there for those who ask


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM dfs.`{root}/js` WHERE id = 1 LIMIT 5",
        "SELECT * FROM dfs.`{root}/js` ORDER BY id LIMIT 5",
        "SELECT * FROM dfs.`{root}/js` LIMIT 5 OFFSET 1",
        "SELECT DISTINCT * FROM dfs.`{root}/js` LIMIT 5",
        "SELECT id FROM dfs.`{root}/js` LIMIT 5",
        "SELECT *, 1 AS one FROM dfs.`{root}/js` LIMIT 5",
        "SELECT * FROM (SELECT * FROM dfs.`{root}/js`) LIMIT 5",
        "SELECT * FROM (SELECT * FROM dfs.`{root}/js`)",
        "SELECT * FROM dfs.`{root}/js` WHERE id = 1",
    ],
)
def test_other_shapes_run_in_spark(session: Any, zoo: Path, query: str) -> None:
    result = session.execute(query.format(root=zoo))
    assert result.dataframe is not None and result.table is None


def test_a_bare_star_over_files_past_local_answer_bytes_runs_in_spark(
    session: Any, zoo: Path
) -> None:
    sql = f"SELECT * FROM dfs.`{zoo}/txt/a.csv`"
    size = (zoo / "txt" / "a.csv").stat().st_size
    session.execute(f"ALTER SESSION SET `auger.scan.local_bytes` = {size - 1}")
    try:
        session.execute(f"ALTER SESSION SET `auger.scan.local_answer_bytes` = {size}")
        assert session.execute(sql).table is not None  # the file fits: read here
        session.execute(f"ALTER SESSION SET `auger.scan.local_answer_bytes` = {size - 1}")
        remote = session.execute(sql)
        assert remote.table is None and remote.to_arrow().num_rows == 2
    finally:
        session.execute("ALTER SESSION RESET `auger.scan.local_bytes`")
        session.execute("ALTER SESSION RESET `auger.scan.local_answer_bytes`")


def test_star_limit_over_a_table_without_columns_keeps_its_row_count(
    conn: Any, tmp_path: Path
) -> None:
    # Before: an empty file's SELECT * ... LIMIT 5 answered five rows of no columns
    (tmp_path / "empty.json").write_bytes(b"")
    (tmp_path / "objects.json").write_bytes(b"{}\n{}\n")
    cur = conn.cursor()
    assert cur.execute(f"SELECT * FROM dfs.`{tmp_path}/empty.json` LIMIT 5").fetchall() == []
    got = cur.execute(f"SELECT * FROM dfs.`{tmp_path}/objects.json` LIMIT 5").fetchall()
    assert len(got) == 2


# ------------------------------------------------- a few small files read on the driver
def _small(conn: Any, sql: str, local_bytes: int) -> Any:
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.scan.local_limit_rows` = 0")
    cur.execute(f"ALTER SESSION SET `auger.scan.local_bytes` = {local_bytes}")
    return conn.session.execute(sql).frame()


@pytest.mark.parametrize(
    "query",
    [
        "SELECT dir0, COUNT(*) AS n, SUM(CAST(columns[1] AS INT)) AS s FROM dfs.`{root}/csv` "
        "GROUP BY dir0 ORDER BY dir0",
        "SELECT t.m.a, t.m.b[1] AS b1, s, nope, dir0 FROM dfs.`{root}/json` t ORDER BY dir0, s",
        "SELECT k, v, filename FROM dfs.`{root}/csvh` WHERE k = '3' ORDER BY v",
    ],
)
def test_small_input_equals_the_data_source(conn: Any, tree: Path, query: str) -> None:
    sql = query.format(root=tree)
    local = _small(conn, sql, 1_000_000)
    remote = _small(conn, sql, 0)
    assert _is_local(local)
    assert not _is_local(remote)
    assert local.schema == remote.schema
    assert local.collect() == remote.collect()


def test_input_above_local_bytes_runs_in_spark(conn: Any, tree: Path) -> None:
    sql = f"SELECT COUNT(*) AS n FROM dfs.`{tree}/csv`"
    size = sum(f.stat().st_size for f in (tree / "csv").rglob("*.csv"))
    assert _is_local(_small(conn, sql, size))  # the limit is inclusive
    df = _small(conn, sql, size - 1)
    assert not _is_local(df)
    assert df.collect()[0][0] == 60


def test_small_input_read_error_is_the_users(conn: Any, tree: Path) -> None:
    with pytest.raises(UserError) as err:
        _small(conn, f"SELECT a FROM dfs.`{tree}/bad`", 1_000_000).collect()
    assert err.value.kind is ErrorKind.DATA_READ
    assert any("a.json" in c for c in err.value.context)


def test_small_input_reads_a_changed_file_anew(conn: Any, tmp_path: Path) -> None:
    data = tmp_path / "t.json"
    data.write_text('{"a": 1}\n{"a": 2}\n')
    sql = f"SELECT SUM(a) AS s, COUNT(*) AS n FROM dfs.`{data}`"
    first = _small(conn, sql, 1_000_000)
    assert _is_local(first)
    assert [tuple(r) for r in first.collect()] == [(3, 2)]
    data.write_text('{"a": 1}\n{"a": 2}\n{"a": 40}\n')
    os.utime(data, (data.stat().st_atime, data.stat().st_mtime + 5))
    assert [tuple(r) for r in _small(conn, sql, 1_000_000).collect()] == [(43, 3)]


def test_a_bare_star_whose_client_takes_a_few_rows_is_left_to_spark(
    session: Any, zoo: Path
) -> None:
    # a server's autoLimit: Spark stops after those rows, where the driver would read it all
    sql = f"SELECT * FROM dfs.`{zoo}/js`"
    capped = session.execute(sql, row_cap=2)
    assert capped.table is None and capped.dataframe is not None
    assert session.execute(sql).table is not None  # the whole answer wanted: read here
    limited = session.execute(f"{sql} LIMIT 2", row_cap=2)
    assert limited.table is not None and limited.table.num_rows == 2  # its own LIMIT: here
