"""The DB-API end to end: descriptions, fetching, streaming, parameters, errors, cancel."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

import auger
from auger import dbapi

NATION = "cp.`tpch/nation.parquet`"


def test_description_has_names_and_drill_sql_types(conn: Any) -> None:
    cur = conn.cursor().execute(
        f"SELECT n_nationkey, n_name, CAST(n_regionkey AS BIGINT) AS r, "
        f"CAST(n_nationkey AS DOUBLE) AS d, CAST(1.5 AS DECIMAL(9, 2)) AS m FROM {NATION}"
    )
    desc = cur.description
    assert [d[0] for d in desc] == ["n_nationkey", "n_name", "r", "d", "m"]
    assert [d[1] for d in desc] == ["INTEGER", "CHARACTER VARYING", "BIGINT", "DOUBLE", "DECIMAL"]
    assert all(len(d) == 7 for d in desc)
    assert desc[4][4:6] == (9, 2)
    assert desc[1][1] == dbapi.STRING and desc[0][1] == dbapi.NUMBER
    assert desc[1][1] != dbapi.NUMBER


def test_fetch_methods_share_one_position(conn: Any) -> None:
    cur = conn.cursor()
    assert cur.arraysize == 1 and cur.rowcount == -1 and cur.description is None
    cur.execute(f"SELECT n_nationkey FROM {NATION} ORDER BY n_nationkey")
    assert cur.rowcount == -1  # not known before the last row
    assert cur.fetchone() == (0,)
    assert cur.fetchmany() == [(1,)]
    cur.arraysize = 3
    assert cur.fetchmany() == [(2,), (3,), (4,)]
    assert cur.fetchmany(2) == [(5,), (6,)]
    assert next(iter(cur)) == (7,)
    assert cur.rownumber == 8
    rest = cur.fetchall()
    assert rest == [(k,) for k in range(8, 25)]
    assert cur.rowcount == 25
    assert cur.fetchone() is None and cur.fetchmany(5) == [] and cur.fetchall() == []


def test_iteration_and_fetchall_and_rowcount_for_ddl(conn: Any) -> None:
    cur = conn.cursor().execute(f"SELECT n_name FROM {NATION} WHERE n_regionkey = 0")
    names = sorted(r[0] for r in cur)
    assert names == ["ALGERIA", "ETHIOPIA", "KENYA", "MOROCCO", "MOZAMBIQUE"]
    assert cur.rowcount == 5
    use = conn.cursor().execute("USE dfs.data")
    assert use.rowcount == 1 and use.statement != "SELECT"
    assert use.fetchall() == [(True, "Default schema changed to [dfs.data]")]
    assert [d[0] for d in use.description] == ["ok", "summary"]


def test_connection_execute_commit_and_context_manager(make_conn: Any) -> None:
    conn = make_conn()
    with conn:
        assert conn.execute(f"SELECT COUNT(n_name) AS n FROM {NATION}").fetchone() == (25,)
        conn.commit()
        with pytest.raises(dbapi.NotSupportedError):
            conn.rollback()
        cur = conn.cursor()
    assert conn.closed and conn.session.closed
    with pytest.raises(dbapi.InterfaceError):
        cur.execute("SELECT 1")
    with pytest.raises(dbapi.InterfaceError):
        conn.cursor()
    conn.close()  # idempotent


def test_closed_cursor_and_fetch_without_result(conn: Any) -> None:
    cur = conn.cursor()
    with pytest.raises(dbapi.ProgrammingError):
        cur.fetchone()
    with cur:
        cur.execute("SELECT 1 AS one")
    with pytest.raises(dbapi.InterfaceError):
        cur.fetchall()


def test_auger_connect_opens_its_own_session() -> None:
    with auger.connect(user="alice") as conn:
        assert conn.session.user == "alice"
        assert conn.execute(f"SELECT n_name FROM {NATION} WHERE n_nationkey = 3").fetchall() == [
            ("CANADA",)
        ]
    assert conn.session.closed


# ------------------------------------------------------------------ streaming
@pytest.fixture
def four_files(data_dir: Path) -> str:
    """A UNION ALL over four JSON files: at least four Spark partitions, 4 x 500 rows."""
    legs = []
    for i in range(4):
        path = data_dir / f"stream_{i}.json"
        path.write_text("".join(json.dumps({"f": i, "k": k}) + "\n" for k in range(500)))
        legs.append(f"SELECT f, k FROM dfs.data.`stream_{i}.json`")
    return " UNION ALL ".join(legs)


def test_fetchone_streams_partition_by_partition(conn: Any, four_files: str) -> None:
    # files this small are otherwise read on the driver into one partition
    conn.cursor().execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")
    partitions = conn.sql(four_files).rdd.getNumPartitions()
    assert partitions >= 4
    tracker = conn.session.engine.spark.sparkContext.statusTracker()
    cur = conn.cursor().execute(four_files)
    first = cur.fetchone()
    assert first is not None and first[0] in range(4)
    # One partition was pulled (and at most one more prefetched), not the whole result.
    assert cur._stream.batches_read == 1
    assert 1 <= len(tracker.getJobIdsForGroup(cur.job_group)) <= 2 < partitions
    rest = cur.fetchall()
    assert len(rest) == 4 * 500 - 1 and cur.rowcount == 2000
    assert len(tracker.getJobIdsForGroup(cur.job_group)) == partitions
    got = sorted([first, *rest])
    assert got == sorted((f, k) for f in range(4) for k in range(500))


def test_streamed_fetches_on_new_threads_use_the_session_settings(conn: Any) -> None:
    # The shell runs each statement on a new thread and streams only the rows it shows; the
    # scan is planned on that thread's JVM side, which must see the session's settings.
    cur = conn.cursor()
    got: list[Any] = []

    def run() -> None:
        try:
            cur.execute("SELECT full_name FROM cp.`employee.json`")
            got.append(cur.fetchmany(2))
        except dbapi.Error as exc:
            got.append(str(exc))

    for _ in range(2):
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
    assert got == [[("Sheri Nowmer",), ("Derrick Whelply",)]] * 2


def test_fetch_arrow_table_and_df_after_partial_fetch(conn: Any, four_files: str) -> None:
    cur = conn.cursor().execute(four_files)
    head = cur.fetchmany(3)
    table = cur.fetch_arrow_table()
    assert isinstance(table, pa.Table) and table.num_rows == 2000 - 3
    assert table.column_names == ["f", "k"]
    keys = sorted(head + list(zip(*(c.to_pylist() for c in table.columns), strict=True)))
    assert keys == sorted((f, k) for f in range(4) for k in range(500))
    assert cur.fetch_arrow_table().num_rows == 0

    df = conn.cursor().execute(f"SELECT n_name, n_regionkey FROM {NATION}").fetch_df()
    assert isinstance(df, pd.DataFrame) and df.shape == (25, 2)
    assert set(df["n_regionkey"]) == {0, 1, 2, 3, 4}


def test_empty_result_keeps_its_schema(conn: Any) -> None:
    cur = conn.cursor().execute(f"SELECT n_name FROM {NATION} WHERE n_nationkey < 0")
    assert [d[0] for d in cur.description] == ["n_name"]
    assert cur.fetchone() is None and cur.rowcount == 0
    table = conn.cursor().execute(f"SELECT n_name FROM {NATION} LIMIT 0").fetch_arrow_table()
    assert table.num_rows == 0 and table.column_names == ["n_name"]


def test_sql_returns_a_spark_dataframe(conn: Any) -> None:
    from pyspark.sql import DataFrame

    df = conn.sql(f"SELECT n_name FROM {NATION} WHERE n_regionkey = ?", (1,))
    assert isinstance(df, DataFrame)
    assert sorted(r.n_name for r in df.collect()) == [
        "ARGENTINA",
        "BRAZIL",
        "CANADA",
        "PERU",
        "UNITED STATES",
    ]
    ok = conn.sql("USE dfs.data")
    assert ok.collect()[0]["summary"] == "Default schema changed to [dfs.data]"
    with pytest.raises(dbapi.ProgrammingError, match=r"^VALIDATION ERROR"):
        conn.sql("SELECT * FROM cp.`nope.json`")


# ------------------------------------------------------------------ parameters
@pytest.mark.parametrize(
    "value",
    [
        "x' OR '1'='1",
        "'; DROP TABLE t; --",
        "\\' OR 1=1 --",
        "back\\slash\\",
        "? and ?",
        "`tick`",
        "/* not a comment */",
        "line\nbreak",
        "ünïcödé ✓",
    ],
)
def test_hostile_strings_round_trip(conn: Any, value: str) -> None:
    assert conn.execute("SELECT ? AS v", (value,)).fetchall() == [(value,)]


def test_typed_parameters_round_trip(conn: Any) -> None:
    values = (
        7,
        2**40,
        0.25,
        decimal.Decimal("12.50"),
        True,
        None,
        dt.date(2024, 2, 29),
        dt.datetime(2024, 2, 29, 13, 14, 15, 123000),
        "s",
    )
    cur = conn.execute("SELECT " + ", ".join("? AS c" + str(i) for i in range(len(values))), values)
    row = cur.fetchone()
    assert row[:3] == (7, 2**40, 0.25)
    assert row[3] == decimal.Decimal("12.50")
    assert row[4:7] == (True, None, dt.date(2024, 2, 29))
    assert row[7] == dt.datetime(2024, 2, 29, 13, 14, 15, 123000)  # zone-less, as in Drill
    assert row[8] == "s"
    types = [d[1] for d in cur.description]
    assert types[2] == "DOUBLE" and types[3] == "DECIMAL" and types[6] == "DATE"


def test_placeholders_in_quotes_comments_and_names_are_not_parameters(conn: Any) -> None:
    cur = conn.execute(
        f"SELECT '?' AS q, n_name AS `who?` FROM {NATION} -- any ?\nWHERE /* ? */ n_nationkey = ?",
        (24,),
    )
    assert cur.fetchall() == [("?", "UNITED STATES")]
    assert cur.description[1][0] == "who?"


def test_executemany_runs_each_parameter_set(conn: Any) -> None:
    cur = conn.cursor()
    cur.executemany(f"SELECT n_name FROM {NATION} WHERE n_nationkey = ?", [(1,), (2,)])
    assert cur.fetchall() == [("BRAZIL",)]
    with pytest.raises(dbapi.ProgrammingError, match="1 parameter markers but 2 values"):
        cur.execute(f"SELECT n_name FROM {NATION} WHERE n_nationkey = ?", (1, 2))


# ------------------------------------------------------------------ errors
def test_errors_carry_the_drill_kind(conn: Any) -> None:
    with pytest.raises(dbapi.ProgrammingError) as info:
        conn.execute("SELECT * FROM cp.`nope.json`")
    assert str(info.value).startswith("VALIDATION ERROR: ")
    assert info.value.kind is auger.ErrorKind.VALIDATION
    with pytest.raises(dbapi.ProgrammingError) as parse:
        conn.execute("SELEC 1")
    assert str(parse.value).startswith("PARSE ERROR: ")
    # the connection is still usable after errors
    assert conn.execute("SELECT 1 AS one").fetchall() == [(1,)]


def test_data_errors_are_data_errors(conn: Any, data_dir: Path) -> None:
    bad = data_dir / "dbapi_bad.json"
    bad.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(dbapi.DataError) as info:  # at planning (schema sample) or at fetch
        conn.execute("SELECT a FROM dfs.data.`dbapi_bad.json`").fetchone()
    assert str(info.value).startswith("DATA_READ ERROR")


# ------------------------------------------------------------------ cancel
LONG_QUERY = (
    "SELECT COUNT(a.employee_id + b.employee_id + c.employee_id) AS n FROM cp.`employee.json` a "
    "CROSS JOIN cp.`employee.json` b CROSS JOIN cp.`employee.json` c"
)


def test_cancel_from_another_thread_keeps_the_session(conn: Any) -> None:
    cur = conn.execute(LONG_QUERY)
    tracker = conn.session.engine.spark.sparkContext.statusTracker()
    failure: list[BaseException] = []

    def fetch() -> None:
        try:
            cur.fetchall()
        except BaseException as exc:
            failure.append(exc)

    worker = threading.Thread(target=fetch)
    worker.start()
    while not tracker.getJobIdsForGroup(cur.job_group) and worker.is_alive():
        time.sleep(0.1)
    cur.cancel()
    worker.join(120)
    assert not worker.is_alive()
    assert len(failure) == 1 and isinstance(failure[0], dbapi.OperationalError)
    assert str(failure[0]) == dbapi.CANCELLED_MESSAGE
    assert cur.cancelled
    assert conn.execute(f"SELECT COUNT(n_name) AS n FROM {NATION}").fetchall() == [(25,)]


def test_cancel_before_fetch_runs_no_job(conn: Any) -> None:
    cur = conn.execute(f"SELECT n_name FROM {NATION}")
    cur.cancel()
    with pytest.raises(dbapi.OperationalError, match="cancelled"):
        cur.fetchone()
    tracker = conn.session.engine.spark.sparkContext.statusTracker()
    assert list(tracker.getJobIdsForGroup(cur.job_group)) == []
    assert conn.execute(f"SELECT n_name FROM {NATION} WHERE n_nationkey = 0").fetchall() == [
        ("ALGERIA",)
    ]


def test_running_stages_report_the_statement_under_way(conn: Any) -> None:
    cur = conn.cursor()
    assert cur.running_stages() == []  # nothing run yet
    slow = (
        "SELECT COUNT(a.employee_id + b.employee_id + c.employee_id) AS n FROM cp.`employee.json` a"
        " CROSS JOIN cp.`employee.json` b CROSS JOIN cp.`employee.json` c"
    )
    done = threading.Event()

    def run() -> None:
        try:
            cur.execute(slow)
            cur.fetchall()
        except dbapi.Error:
            pass  # cancelled below
        finally:
            done.set()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    seen: list[tuple[int, int, int]] = []
    while not seen and not done.is_set():
        seen = cur.running_stages()
        time.sleep(0.1)
    cur.cancel()
    worker.join(300)
    assert seen, "the statement ended before any stage was seen running"
    stage, finished, tasks = seen[0]
    # a stage may be seen in the instant its last task finished, before Spark retires it
    assert stage >= 0 and tasks > 0 and 0 <= finished <= tasks
    assert cur.running_stages() == []  # over: nothing left running
