"""An engine that started Spark (a server's, a notebook's) starts Spark's Python workers while it
waits for its next statement, and only once nothing has run for a moment: the decision is
tested on a made-up clock, the read on Spark, the whole in a process of its own."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from auger.spark import warm_up
from auger.spark.warm_up import (
    WARM_UP_GROUP,
    compile_parquet_reads,
    compile_small_queries,
    wait_until_idle,
    warm_python_workers,
)
from tests.fakes import FakeClock
from tests.spark.processes import run_embedded


class _Spark:
    """A session whose status tracker answers the active jobs from a script, one per look."""

    def __init__(self, jobs: list[list[int]]) -> None:
        self.jobs = jobs
        self.sparkContext = self

    def statusTracker(self) -> Any:
        return self

    def getActiveJobsIds(self) -> list[int]:
        return self.jobs.pop(0) if len(self.jobs) > 1 else self.jobs[0]


def test_idle_means_no_job_and_no_query_for_a_quiet_spell() -> None:
    clock = FakeClock()
    # a job runs for the first three looks, then none
    spark = _Spark([[1], [1], [1], []])
    queries = iter([False] * 8 + [True] + [False] * 1000)  # one query comes in the quiet spell
    assert wait_until_idle(spark, lambda: next(queries), 1.0, 60.0, clock, clock.sleep)
    # 3 looks busy with the job, 5 quiet ones, the query's look, then 1 s of quiet again
    assert 2.7 <= clock.now <= 3.1


def test_a_server_never_idle_gives_up_warming() -> None:
    clock = FakeClock()
    assert not wait_until_idle(_Spark([[7]]), lambda: False, 1.0, 10.0, clock, clock.sleep)
    assert 10.0 <= clock.now <= 10.5


def test_the_warm_up_reads_through_the_data_source_in_its_own_group(spark: Any) -> None:
    # on a thread of its own, as the server runs it (it sets that thread's job group)
    thread = threading.Thread(target=warm_python_workers, args=(spark, 100))
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert list(spark.sparkContext.statusTracker().getJobIdsForGroup(WARM_UP_GROUP))


def test_an_engine_is_busy_while_a_statement_runs_or_a_check_says_so(engine: Any) -> None:
    from auger.engine import Engine

    fresh = Engine(engine.config.raw)
    try:
        assert not fresh.busy()
        time.sleep(0.05)
        before = fresh.idle_seconds()
        assert before >= 0.05  # since the engine started
        with fresh.running_statement():
            assert fresh.busy()
            assert fresh.idle_seconds() == 0.0
        assert not fresh.busy()
        assert 0.0 < fresh.idle_seconds() < before  # counted again from the statement's end
        serving = threading.Event()
        fresh.add_busy_check(serving.is_set)
        serving.set()
        assert fresh.busy()
        serving.clear()
        assert not fresh.busy()
    finally:
        fresh.shutdown()
    assert fresh.busy()  # nothing starts in the background of a closed engine


def test_a_statement_counts_as_running_while_it_plans_and_runs(
    engine: Any, monkeypatch: Any
) -> None:
    import auger.sql.router as router

    seen: list[bool] = []
    planning = router.execute_statement

    def watched(statement: Any) -> Any:
        seen.append(engine.busy())
        return planning(statement)

    monkeypatch.setattr(router, "execute_statement", watched)
    session = engine.open_session()
    try:
        assert session.execute("SELECT 1 AS a").to_arrow().num_rows == 1
    finally:
        session.close()
    assert seen == [True]
    assert not engine.busy()


def test_an_engine_that_starts_spark_warms_its_workers_when_idle(
    engine: Any, monkeypatch: Any
) -> None:
    import auger.engine as engine_module
    import auger.spark.keep_warm as keep_warm_module
    import auger.spark.warm_up as warm_up_module
    from auger.engine import Engine

    monkeypatch.setenv("AUGER_WARM_UP", "1")
    started: list[Any] = []
    called = threading.Event()
    monkeypatch.setattr(engine_module, "spark_is_running", lambda: False)
    monkeypatch.setattr(engine_module, "get_spark", lambda master, conf: "a fresh spark")
    monkeypatch.setattr(Engine, "_spark_checked", staticmethod(lambda spark: True))

    kept: list[Any] = []

    def warm(spark: Any, busy: Any) -> bool:
        started.append((spark, busy))
        return True

    def keep(spark: Any, busy: Any, idle_for: Any, ended: Any) -> int:
        kept.append((spark, busy, idle_for, ended))
        called.set()
        return 0

    monkeypatch.setattr(warm_up_module, "warm_when_idle", warm)
    monkeypatch.setattr(keep_warm_module, "keep_workers_warm", keep)
    fresh = Engine(engine.config.raw)
    try:
        assert fresh.spark == "a fresh spark"
        assert fresh.spark == "a fresh spark"  # once per start
        assert called.wait(30)
        # warmed up, then its workers kept for as long as this engine runs that Spark
        assert started == [("a fresh spark", fresh.busy)]
        [(spark, busy, idle_for, ended)] = kept
        assert (spark, busy, idle_for) == ("a fresh spark", fresh.busy, fresh.idle_seconds)
        assert not ended()
    finally:
        fresh.shutdown()
    assert ended()


def test_an_engine_started_with_the_warm_up_switched_off_does_not_warm_up(
    engine: Any, monkeypatch: Any
) -> None:
    import auger.engine as engine_module
    import auger.spark.warm_up as warm_up_module
    from auger.engine import Engine

    monkeypatch.setenv("AUGER_WARM_UP", "0")
    calls: list[Any] = []
    monkeypatch.setattr(engine_module, "spark_is_running", lambda: False)
    monkeypatch.setattr(engine_module, "get_spark", lambda master, conf: "a fresh spark")
    monkeypatch.setattr(Engine, "_spark_checked", staticmethod(lambda spark: True))
    monkeypatch.setattr(warm_up_module, "warm_when_idle", lambda *args: calls.append(args))
    fresh = Engine(engine.config.raw)
    try:
        assert fresh.spark == "a fresh spark"
    finally:
        fresh.shutdown()
    assert calls == []


def test_an_engine_over_a_running_spark_does_not_warm_up(engine: Any, monkeypatch: Any) -> None:
    import auger.spark.warm_up as warm_up_module
    from auger.engine import Engine

    monkeypatch.setenv("AUGER_WARM_UP", "1")
    calls: list[Any] = []
    monkeypatch.setattr(warm_up_module, "warm_when_idle", lambda *args: calls.append(args))
    fresh = Engine(engine.config.raw)
    try:
        assert fresh.spark is not None  # the test session's Spark, already running
    finally:
        fresh.shutdown()
    assert calls == []


_EMBEDDED = """
import sys, time
import auger
from auger.engine import Engine
from auger.spark.warm_up import WARM_UP_GROUP

with auger.connect() as conn:
    conn.cursor().execute("SELECT 1 AS a").fetchall()
    tracker = Engine.default().spark.sparkContext.statusTracker()
    deadline = time.monotonic() + 120
    while not list(tracker.getJobIdsForGroup(WARM_UP_GROUP)):
        if time.monotonic() > deadline:
            sys.exit("no warm-up job in two minutes")
        time.sleep(0.05)
    print("warming", flush=True)
# the process ends now, most likely while the warm-up's job still runs
"""


def test_an_embedded_engine_warms_up_and_its_process_still_ends_cleanly(tmp_path: Path) -> None:
    done = run_embedded(_EMBEDDED, tmp_path, master="local[1]", warm_up=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "warming"
    assert "Traceback" not in done.stderr
    assert "Exception" not in done.stderr


def _on_a_thread(call: Any) -> Any:
    """``call()`` on a thread of its own, as the engine runs the warm-up (job groups are set
    per thread)."""
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(call()))
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive()
    return out[0]


def _quiet(spark: Any) -> None:
    """Until no job of an earlier test runs (the small queries give way to any other job)."""
    assert wait_until_idle(spark, lambda: False, quiet=0.5, patience=120)


def test_the_small_queries_run_their_rounds_as_warm_up_jobs(spark: Any) -> None:
    _quiet(spark)
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup(WARM_UP_GROUP))
    assert _on_a_thread(lambda: compile_small_queries(spark, lambda: False, rounds=3)) == 3
    assert len(set(tracker.getJobIdsForGroup(WARM_UP_GROUP)) - before) >= 3
    assert not spark.catalog.tableExists("auger_warm_up_rows")


def test_the_small_queries_stop_as_soon_as_the_engine_is_busy(spark: Any) -> None:
    _quiet(spark)
    looks = iter([False, False] + [True] * 100)
    ran = _on_a_thread(lambda: compile_small_queries(spark, lambda: next(looks), rounds=50))
    assert ran == 2
    assert not spark.catalog.tableExists("auger_warm_up_rows")


def test_the_parquet_reads_run_their_rounds_as_warm_up_jobs(spark: Any) -> None:
    _quiet(spark)
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup(WARM_UP_GROUP))
    ran = _on_a_thread(lambda: compile_parquet_reads(spark, lambda: False, rows=2000, rounds=2))
    assert ran == 2
    assert len(set(tracker.getJobIdsForGroup(WARM_UP_GROUP)) - before) >= 2


def test_the_parquet_reads_stop_as_soon_as_the_engine_is_busy(spark: Any) -> None:
    _quiet(spark)
    looks = iter([False] + [True] * 100)
    ran = _on_a_thread(lambda: compile_parquet_reads(spark, lambda: next(looks), rows=2000))
    assert ran == 1


class _Workers:
    """Spark's side of the warm-up's read, faked: the read's job runs at once, or, with
    ``query``, a query's job starts beside it and the read's job then runs until its group is
    cancelled. ``spark.read`` answers every step of building the read, and its ``collect``
    runs that job."""

    def __init__(self, query: bool) -> None:
        self.query = query
        self.query_running = False
        self.cancelled = threading.Event()
        self.groups: list[str] = []
        self.sparkContext = self
        self.defaultParallelism = 2
        self.read = self

    def __getattr__(self, step: str) -> Any:  # format, option, load, selectExpr, ...
        return lambda *args, **kwargs: self

    # the SparkContext
    def statusTracker(self) -> Any:
        return self

    def setJobGroup(self, group: str, description: str, interrupt: bool) -> None:
        self.groups.append(group)

    def cancelJobGroup(self, group: str) -> None:
        self.cancelled.set()

    # the status tracker
    def getJobIdsForGroup(self, group: str) -> list[int]:
        return [1]

    def getActiveJobsIds(self) -> list[int]:
        return [1, 2] if self.query_running else [1]

    # the read's job
    def collect(self) -> list[Any]:
        if not self.query:
            return []
        self.query_running = True
        deadline = time.monotonic() + 10
        while not self.cancelled.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        raise RuntimeError("Job 1 cancelled part of cancelled job group")


def test_the_workers_read_gives_way_to_a_query_that_starts_while_it_runs() -> None:
    """A query's job starting during the read cancels the read's job (the query does not wait
    for the task slots the read holds while the workers start); with no query it runs to its
    end."""
    spark = _Workers(query=True)
    started = time.monotonic()
    assert warm_python_workers(spark, 10) is False
    assert spark.cancelled.is_set() and time.monotonic() - started < 5
    assert spark.groups == [WARM_UP_GROUP]
    quiet = _Workers(query=False)
    assert warm_python_workers(quiet, 10) is True
    assert not quiet.cancelled.is_set()


def test_the_warm_up_ends_when_its_workers_read_gave_way(monkeypatch: Any) -> None:
    """After giving way to a query the warm-up runs nothing more: the query has the cores."""
    later: list[str] = []
    monkeypatch.setattr(warm_up, "wait_until_idle", lambda spark, busy: True)
    monkeypatch.setattr(warm_up, "warm_python_workers", lambda spark: False)
    monkeypatch.setattr(
        warm_up, "compile_parquet_reads", lambda spark, busy: later.append("parquet") or 0
    )
    monkeypatch.setattr(
        warm_up, "compile_small_queries", lambda spark, busy: later.append("small") or 0
    )
    assert warm_up.warm_when_idle(object(), lambda: False)
    assert later == []
    monkeypatch.setattr(warm_up, "warm_python_workers", lambda spark: True)
    assert warm_up.warm_when_idle(object(), lambda: False)
    assert later == ["parquet", "small"]
