"""Spark's Python workers started while an engine waits for its next statement.

A Spark's first scan through the ``auger`` data source waits while Spark starts the Python
processes that create the source, plan its read and run its tasks (a daemon each, forking
workers that import pyarrow and auger's readers): about 3 s on two cores, ten times the scan of
a few small files once they run. A server, a shell or a notebook usually has time for that
before the first such scan: once the engine has started Spark and nothing has run for a
moment, it reads a few megabytes of CSV through the data source, groups a few Parquet files
(the reader every query answered from the raw-file cache goes through), then runs a few small
queries (:meth:`auger.engine.Engine._warm_up`). Spark stops those workers again after a
minute with nothing to do; :mod:`auger.spark.keep_warm` keeps them while the engine is idle.

Only when idle: a warm-up next to a query competes with it for the cores and, Spark's jobs
being served in order, could make it wait for a job it did not ask for (``auger demo``, whose
queries follow the server's start at once, measured 1.7 s slower with an eager warm-up). So a
script whose statements follow each other never warms up, and one that ends during the warm-up
ends as it would without it (the warm-up's thread is a daemon; Spark stops under its job). A
query that comes while the workers are being started does not wait for them either: its own
job cancels the warm-up's, and the warm-up ends there.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyarrow import csv

from auger.spark.datasource import PLANNED_SOURCE
from auger.spark.handles import is_connect
from auger.spark.jobs import jobs_outside, run_giving_way, to_arrow
from auger.spark.plan_reuse import ReusedPlans

__all__ = [
    "COMPILE_ROUNDS",
    "ENV_SWITCH",
    "WARM_UP_GROUP",
    "anything_running",
    "compile_parquet_reads",
    "compile_small_queries",
    "wait_until_idle",
    "warm_python_workers",
    "warm_up_enabled",
    "warm_when_idle",
]

_log = logging.getLogger(__name__)

#: The environment variable that, set to ``0``, keeps engines from warming Spark up (a test
#: run, a machine where idle CPU is not free).
ENV_SWITCH = "AUGER_WARM_UP"


def warm_up_enabled() -> bool:
    """Whether engines warm Spark up when idle (unless ``AUGER_WARM_UP=0``)."""
    return os.environ.get(ENV_SWITCH, "1").strip() != "0"


#: The Spark job group of the warm-up's read (Spark's UI shows it under this name).
WARM_UP_GROUP = "auger-warm-up"
#: Seconds with no Spark job and no query that count as idle.
QUIET_S = 1.0
#: Seconds after which a server that was never idle stops waiting to warm up.
PATIENCE_S = 120.0
#: Seconds between two looks.
POLL_S = 0.2


def anything_running(spark: Any, busy: Callable[[], bool]) -> bool:
    """Whether the engine is busy (``busy()``: its statements, a server's answers) or Spark runs
    a job, anyone's: what an idle chore of the engine waits out."""
    return busy() or len(spark.sparkContext.statusTracker().getActiveJobsIds()) > 0


def wait_until_idle(
    spark: Any,
    busy: Callable[[], bool],
    quiet: float = QUIET_S,
    patience: float = PATIENCE_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Whether Spark ran no job and ``busy()`` stayed false for ``quiet`` seconds in a row
    before ``patience`` seconds passed."""
    start = clock()
    calm_since: float | None = None
    while True:
        now = clock()
        if anything_running(spark, busy):
            calm_since = None
        elif calm_since is None:
            calm_since = now
        elif now - calm_since >= quiet:
            return True
        if now - start >= patience:
            return False
        sleep(POLL_S)


#: Lines of each warm-up file (about 4 MB of headerless CSV), one file per task slot.
WARM_UP_LINES = 150_000


def _warm_up_file(path: Path, lines: int) -> None:
    """Headerless CSV of ``lines`` lines: a number, a decimal, a name and a small number."""
    numbers = pa.array(range(lines), pa.int64())
    table = pa.table(
        {
            "n": numbers,
            "d": pc.multiply(numbers, 0.5),
            "s": pc.binary_join_element_wise(
                "name", pc.cast(pc.divide(numbers, 50), pa.string()), ""
            ),
            "k": pc.cast(pc.divide(numbers, 7), pa.string()),
        }
    )
    csv.write_csv(table, path, csv.WriteOptions(include_header=False, quoting_style="none"))


def warm_python_workers(spark: Any, lines: int = WARM_UP_LINES) -> bool:
    """Read a few megabytes of CSV through the ``auger`` data source, a file per task slot,
    and group them, so that Spark has started the Python processes a scan needs (one worker
    per slot) and has compiled what a scan and an aggregate run at volume (a classic session:
    Spark Connect's server warms its own). Runs on a thread of its own, whose job group it
    sets.

    Measured on two cores, 15-20 s after Spark's start, a first GROUP BY over 300 MB of CSV
    took 2.3-2.5 s after a warm-up over one tiny file and 1.8-2.0 s after this one (1.3-1.45 s
    once warm); over 10 MB, 4.5 s with no warm-up, 1.3 s after the tiny file and 0.9 s after
    this one. It costs about 1.2 s of idle time.

    Whether it ran to its end: a query's job that starts meanwhile cancels it."""
    if is_connect(spark):
        return False
    slots = min(max(1, int(spark.sparkContext.defaultParallelism)), 4)
    with tempfile.TemporaryDirectory(prefix="auger-warm-up-") as root:
        for slot in range(slots):
            _warm_up_file(Path(root) / f"warm-{slot}.csv", lines)

        def read() -> None:
            # the source the planner reads through (its Python function is the one to warm)
            frame = spark.read.format(PLANNED_SOURCE).option("format", "csv").load(root)
            typed = frame.selectExpr("columns[3] AS k", "CAST(columns[1] AS DOUBLE) AS d")
            typed.groupBy("k").agg({"d": "sum", "k": "count"}).collect()

        # its tasks hold Spark's task slots for seconds, most of it waiting for the workers to
        # start: a query that comes meanwhile cancels it rather than wait (measured on two
        # cores, a query over cached files sent 2 s into it took 5.7 s, and 2.7-3.9 s with it
        # cancelled; 3.1-3.2 s with no warm-up)
        return run_giving_way(spark, WARM_UP_GROUP, "start Spark's Python workers", read)


#: Rows of each Parquet file :func:`compile_parquet_reads` groups (about 12 MB), one file per
#: task slot, and how many times it groups them.
PARQUET_ROWS = 500_000
PARQUET_ROUNDS = 2


def _warm_up_parquet(path: Path, rows: int) -> None:
    """A Parquet file shaped as the raw-file cache's parts: a string of few values, a string of
    many, an integer and a double, dictionary-encoded as pyarrow writes them."""
    numbers = pa.array(range(rows), pa.int64())
    table = pa.table(
        {
            "k": pc.cast(pc.bit_wise_and(numbers, 63), pa.string()),
            "s": pc.binary_join_element_wise("name", pc.cast(numbers, pa.string()), ""),
            "n": numbers,
            "d": pc.multiply(numbers, 0.5),
        }
    )
    pq.write_table(table, path, row_group_size=max(1, rows // 4))


def compile_parquet_reads(
    spark: Any,
    busy: Callable[[], bool],
    rows: int = PARQUET_ROWS,
    rounds: int = PARQUET_ROUNDS,
) -> int:
    """Group a few Parquet files through Spark's vectorized reader ``rounds`` times, or until
    ``busy()`` or another job runs; how many rounds ran.

    Every query answered from the raw-file cache (:mod:`auger.spark.cached_scan`) or over
    Parquet files reads through that reader, whose code a JVM loads and compiles only as it
    runs. Measured on two cores over 300 MB of CSV held in the cache, a session's first such
    query took 1.8-2.1 s after the CSV warm-up alone, and 0.7-0.9 s after this one (0.55 s
    once warm). It costs about 1.5 s of idle time."""
    if is_connect(spark) or rounds <= 0:
        return 0
    slots = min(max(1, int(spark.sparkContext.defaultParallelism)), 4)
    with tempfile.TemporaryDirectory(prefix="auger-warm-up-") as root:
        for slot in range(slots):
            _warm_up_parquet(Path(root) / f"warm-{slot}.parquet", rows)
        spark.sparkContext.setJobGroup(WARM_UP_GROUP, "compile Spark's Parquet reader", True)
        frame = spark.read.parquet(root)
        grouped = frame.groupBy("k").agg({"d": "sum", "n": "max", "s": "count"})
        return _rounds(spark, busy, rounds, grouped.collect)


def _rounds(spark: Any, busy: Callable[[], bool], rounds: int, run: Callable[[], Any]) -> int:
    """``run()`` up to ``rounds`` times, each while neither ``busy()`` nor a job outside the
    warm-up runs (a query that arrives waits for one round at most: a round is short, and the
    query is quicker for the code it compiled); how many rounds ran."""
    tracker = spark.sparkContext.statusTracker()
    done = 0
    while done < rounds and not busy() and not jobs_outside(tracker, WARM_UP_GROUP):
        run()
        done += 1
    return done


#: Rounds of the small query :func:`compile_small_queries` runs (about 10 s of idle time on two
#: cores; a query that arrives waits for one round at most). Spark's analyser, planner and
#: scheduler run once a query, so the JVM compiles their code only over the first hundred or so
#: queries of a session, whatever their shape. Measured on two cores with a GROUP BY over
#: cp.`employee.json` 45 s after Spark's start: after 30 rounds, the first such query took
#: 270-370 ms and the median of the next twenty 79-85 ms; after 150 rounds, 190-250 ms and
#: 54-58 ms (100 and 200 rounds did no better than 150).
COMPILE_ROUNDS = 150

#: The temporary view the small query reads while the warm-up runs.
_WARM_UP_VIEW = "auger_warm_up_rows"


def compile_small_queries(
    spark: Any, busy: Callable[[], bool], rounds: int = COMPILE_ROUNDS
) -> int:
    """Run a small GROUP BY over rows held on the driver ``rounds`` times, or until ``busy()``
    or another job runs; how many rounds ran.

    It is the shape of a warm statement over a small file (a kept frame's view, see
    :mod:`auger.spark.kept_frames`), whose time is mostly Spark analysing, optimising and
    planning it: code the JVM compiles only once it has run it a few dozen times, so without
    this a session's first query pays for it."""
    if is_connect(spark) or rounds <= 0:
        return 0
    keys = pa.array([i % 7 for i in range(1000)], pa.int64())
    rows = pa.table({"k": keys, "v": pa.array([float(i) for i in range(1000)])})
    spark.createDataFrame(rows).coalesce(1).createOrReplaceTempView(_WARM_UP_VIEW)
    spark.sparkContext.setJobGroup(WARM_UP_GROUP, "compile Spark's planner", True)
    query = f"SELECT k, COUNT(*) AS n, SUM(v) AS s FROM {_WARM_UP_VIEW} GROUP BY k ORDER BY n DESC"
    try:
        # the first look at whether a plan may run again (auger.spark.plan_reuse) in a JVM
        # costs ~15 ms of reflection, which a session's first statement would pay
        ReusedPlans().offer(query, (), spark.sql(query))
        return _rounds(spark, busy, rounds, lambda: to_arrow(spark.sql(query)))
    finally:
        spark.catalog.dropTempView(_WARM_UP_VIEW)


def warm_when_idle(spark: Any, busy: Callable[[], bool]) -> bool:
    """:func:`warm_python_workers`, :func:`compile_parquet_reads` then
    :func:`compile_small_queries` once Spark and the engine are idle; whether it ran. A
    failure (Spark stopping under it) is only logged: the first queries start the workers and
    compile the reader and the planner themselves."""
    try:
        if not wait_until_idle(spark, busy):
            return False
        started = time.monotonic()
        if not warm_python_workers(spark):
            _log.info("the warm-up gave way to a query")
            return True
        _log.info("Spark's Python workers started in %.1f s", time.monotonic() - started)
        started = time.monotonic()
        rounds = compile_parquet_reads(spark, busy)
        _log.info("%d Parquet reads in %.1f s", rounds, time.monotonic() - started)
        rounds = compile_small_queries(spark, busy)
        _log.info("%d small queries compiled Spark's planner", rounds)
        return True
    except Exception:
        _log.debug("warming Spark's Python workers failed", exc_info=True)
        return False
