"""A result given up mid-fetch stops its Spark jobs: cursor close, garbage collection,
connection close and a new statement on the same cursor.

The query streams a first partition at once (one row) while the partition after it hashes 2
million long strings and returns nothing; fetching the first row starts that partition's job
(Spark prefetches one partition ahead). Each test gives the result up and polls until no job
of the statement's group runs any more (a task stops at its next batch, a second or so; the
bound allows for a loaded machine).
"""

from __future__ import annotations

import gc
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

NATION = "cp.`tpch/nation.parquet`"


@pytest.fixture(scope="module")
def heavy(data_dir: Path) -> str:
    """The query: its second partition scans a Parquet file and hashes 30 KB per row. A scan
    checks for a killed task between batches, so cancelling really stops the work."""
    pq.write_table(
        pa.table({"n": pa.array(range(2_000_000), pa.int64())}), data_dir / "abandoned.parquet"
    )
    return (
        "select 'first' as x from (values(1)) union all "
        "select cast(n as varchar) as x from dfs.data.`abandoned.parquet` "
        "where sha2(repeat(cast(n as varchar), 3000), 512) = 'x'"
    )


def running(sc: Any, group: str) -> list[int]:
    tracker = sc.statusTracker()
    return [
        job
        for job in tracker.getJobIdsForGroup(group)
        if (info := tracker.getJobInfo(job)) is not None and info.status == "RUNNING"
    ]


def stopped(sc: Any, group: str) -> bool:
    """No job of ``group`` runs, and no task at all is left running (the tests run one
    statement at a time, so a task still running is one that ignored its cancellation)."""
    busy = sum(e.numRunningTasks for e in sc.statusTracker().getExecutorInfos())
    return not running(sc, group) and busy == 0


def poll(condition: Any, limit: float = 90.0) -> bool:
    """Whether ``condition()`` became true within ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return bool(condition())


@pytest.fixture
def sc(spark: Any) -> Any:
    return spark.sparkContext


@pytest.fixture
def groups(sc: Any) -> Iterator[list[str]]:
    """Job groups the test started; cancelled at the end whatever happened."""
    started: list[str] = []
    yield started
    for group in started:
        sc.cancelJobGroup(group)


def start_heavy(cur: Any, heavy: str, sc: Any, groups: list[str]) -> str:
    """Run ``heavy``, fetch its first row, and return the group once its next job runs."""
    cur.execute(heavy)
    group = cur.job_group
    groups.append(group)
    assert cur.fetchone() == ("first",)
    assert poll(lambda: running(sc, group)), "the next partition's job never started"
    return group


def assert_quiet(capfd: pytest.CaptureFixture[str], caught: list[warnings.WarningMessage]) -> None:
    _out, err = capfd.readouterr()
    assert "Exception ignored" not in err and "Traceback" not in err, err
    assert [str(w.message) for w in caught] == []


def test_closing_a_cursor_mid_fetch_cancels_its_jobs(
    conn: Any, heavy: str, sc: Any, groups: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    cur = conn.cursor()
    group = start_heavy(cur, heavy, sc, groups)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cur.close()
        assert poll(lambda: stopped(sc, group)), f"jobs {running(sc, group)} still run"
    assert_quiet(capfd, caught)
    assert conn.execute(f"select count(*) from {NATION}").fetchall() == [(25,)]


def test_a_cursor_collected_mid_fetch_cancels_its_jobs(
    conn: Any, heavy: str, sc: Any, groups: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    cur = conn.cursor()
    group = start_heavy(cur, heavy, sc, groups)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del cur
        gc.collect()
        assert poll(lambda: stopped(sc, group)), f"jobs {running(sc, group)} still run"
    assert_quiet(capfd, caught)
    assert conn.execute(f"select count(*) from {NATION}").fetchall() == [(25,)]


def test_closing_the_connection_cancels_its_cursors_jobs(
    make_conn: Any, heavy: str, sc: Any, groups: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    conn = make_conn()
    cur = conn.cursor()
    group = start_heavy(cur, heavy, sc, groups)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        conn.close()
        assert poll(lambda: stopped(sc, group)), f"jobs {running(sc, group)} still run"
    assert_quiet(capfd, caught)
    assert cur.closed
    assert make_conn().execute(f"select count(*) from {NATION}").fetchall() == [(25,)]


def test_a_new_statement_on_the_cursor_cancels_the_abandoned_one(
    conn: Any, heavy: str, sc: Any, groups: list[str]
) -> None:
    cur = conn.cursor()
    group = start_heavy(cur, heavy, sc, groups)
    assert cur.execute(f"select count(*) from {NATION}").fetchall() == [(25,)]
    assert poll(lambda: stopped(sc, group)), f"jobs {running(sc, group)} still run"
