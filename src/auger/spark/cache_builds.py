"""Building raw-file cache entries after the answer, in the background.

A query over files the cache does not hold is answered by the scan framework exactly as with
the cache off; the files' entries are written afterwards by a Spark job of their own (the
``auger`` data source reading every column the cache keeps, its tasks writing the parts, see
:mod:`auger.scan.cache_build`). So a first query is never slowed by the build, and the next one
over the same files reads the entries once they are published.

Bounded: one builder thread per process, handed the build when a scan schedules it (while
the statement is planned), which starts a job only once the statement's own job has started
and Spark has then run no job for a moment (its answer is out, also when it was streamed; it
waits at most :data:`IDLE_WAIT_S`), and one build per entry at a time (a file already being
built is left to that build). A failed build leaves no entry and never
fails a query; the files are parsed again by the next query, which schedules another build.

A build gives way to users' queries: Spark runs jobs first in, first out, so a query whose job
starts while a build's tasks hold the cores would wait for the build (on a fresh session the
build may even start first, while the statement is still being planned). So while its job
runs, the build watches Spark for any job outside its own group; on seeing one it stops its
job (the parts already published stay, a cut part is never published) and waits for quiet
again, then builds the entries still missing, at most :data:`MAX_YIELDS` times. With a local
Spark it stops by a signal its tasks see at their next batch, so that their Python workers stay
alive for the user's query (:mod:`auger.scan.cache_build`); what still runs a moment later, and
a cluster's tasks at once, are cancelled. Its job may still be being planned when the user's
job appears (cancelling the group then cancels nothing), so it goes on cancelling until its
run returns.

One builder per process: its thread, queue and the entries under way belong to the process's
one SparkContext, which every engine of the process shares.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from auger.scan.cache import complete_parts, entry_dir, evict
from auger.scan.spec import ColumnSource, FileSplit
from auger.spark.bootstrap import is_local_master
from auger.spark.datasource_read import datasource_frame
from auger.spark.jobs import run_giving_way
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

if TYPE_CHECKING:
    from auger.scan.plan import PlannedScan

__all__ = ["IDLE_WAIT_S", "MAX_YIELDS", "schedule_build", "wait_for_builds"]

_log = logging.getLogger(__name__)

#: The longest a build waits for Spark to finish the jobs running when it was scheduled (a
#: busy server still gets its entries, a little later).
IDLE_WAIT_S = 30.0

#: The job group of build jobs (a statement's cancel never names it).
JOB_GROUP = "auger-raw-cache-build"

_lock = threading.Lock()
_building: set[str] = set()  # entry directories a scheduled build writes
_pending: list[Future[None]] = []
_queue: queue.Queue[tuple[Future[None], Callable[[], None]]] = queue.Queue()
_worker: threading.Thread | None = None


def _submit(call: Callable[[], None]) -> Future[None]:
    """Hand ``call`` to the one builder thread. A daemon: a process that ends does not wait
    for builds (a part cut short stays under its hidden temporary name, never read)."""
    global _worker
    future: Future[None] = Future()
    _queue.put((future, call))
    with _lock:
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_work, name="auger-cache-build", daemon=True)
            _worker.start()
    return future


def _work() -> None:
    while True:
        future, call = _queue.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            call()
        except BaseException as exc:  # never the thread's end
            future.set_exception(exc)
        else:
            future.set_result(None)


#: The one column a build job gives Spark (nulls; see schedule_build)
BUILD_COLUMN = "__auger_build__"


def schedule_build(
    spark: Any,
    planned: PlannedScan,
    table: str,
    files: Sequence[FileSplit],
    location: str,
    limit: int,
) -> None:
    """Write the entries of ``files`` (of ``planned``'s table, under the table directory
    ``table``) once Spark is idle; files some build already writes are skipped."""
    with _lock:
        todo = [f for f in files if entry_dir(table, f) not in _building]
        entries = [entry_dir(table, f) for f in todo]
        _building.update(entries)
    if not todo:
        return
    # The job's tasks read every kept column for the entries (auger.scan.cache_build widens
    # the spec) and give Spark a single column of nulls: Spark discards the job's rows, and
    # sending it the kept columns cost a third of a build's time on 2 GB of CSV.
    discarded = TupleSchema([ColumnMetadata(BUILD_COLUMN, MinorType.INT, DataMode.OPTIONAL)])
    spec = replace(
        planned.spec,
        files=tuple(todo),
        output_schema=discarded.to_text(),
        sources={BUILD_COLUMN: ColumnSource.MISSING},
        projection=(),
        limit=None,
        cache_build=table,
    )
    job = replace(planned, spec=spec, schema=discarded, selects=None, missing=())

    after = _next_job_id(spark)  # the statement's own jobs come next: the build waits for them

    def start() -> None:
        future = _submit(lambda: _build(spark, job, entries, location, limit, after))
        with _lock:
            _pending[:] = [f for f in _pending if not f.done()]
            _pending.append(future)

    start()  # the build waits for the answer: see _wait_idle


#: How many times a build gives way to users' jobs before it leaves its files to the next
#: query over them (which schedules them again).
MAX_YIELDS = 5

#: Builds that gave way to a user's job since the process started (the tests read it).
yields = 0


def _build(
    spark: Any,
    job: PlannedScan,
    entries: list[str],
    location: str,
    limit: int,
    after: int | None = None,
) -> None:
    global yields
    try:
        for _ in range(MAX_YIELDS + 1):
            _wait_idle(spark, after)
            after = None  # a job gave way to a user's, which has run since
            todo = _missing(job)
            if todo is None:
                break
            if _run_giving_way(spark, todo):
                break
            yields += 1
        evict(location, limit, frozenset(entries))
    except Exception as exc:  # a build that fails only means no entry
        _log.info("raw-file cache entries not built: %s", exc)
    finally:
        with _lock:
            _building.difference_update(entries)


def _missing(job: PlannedScan) -> PlannedScan | None:
    """``job`` over the files whose entries are not complete yet (a build that gave way may
    have published some), or None when every entry is."""
    table = job.spec.cache_build
    files = tuple(
        f
        for f in job.spec.files
        if table is None or complete_parts(entry_dir(table, f), f.size) is None
    )
    if not files:
        return None
    return replace(job, spec=replace(job.spec, files=files))


def _run_giving_way(spark: Any, job: PlannedScan) -> bool:
    """Run the build's job; False when it gave way to a user's job.

    With a local Spark its tasks are given a stop signal (``ScanSpec.build_stop``, a file
    created to give way), which they see at their next batch; executors elsewhere cannot see
    the driver's files, and their tasks are cancelled."""
    signal = ""
    if is_local_master(spark.sparkContext.master):
        signal = os.path.join(tempfile.gettempdir(), f"auger-build-stop-{uuid.uuid4().hex}")
        job = replace(job, spec=replace(job.spec, build_stop=signal))
    try:
        return run_giving_way(
            spark,
            JOB_GROUP,
            "auger: raw-file cache entries",
            lambda: datasource_frame(spark, job).write.format("noop").mode("overwrite").save(),
            stop=partial(_signal, signal) if signal else None,
        )
    finally:
        if signal:
            with contextlib.suppress(OSError):
                os.remove(signal)


def _signal(path: str) -> None:
    """Create the stop signal ``path`` (the build's job is cancelled a moment later when its
    tasks did not end: a signal that could not be created is only logged)."""
    try:
        with open(path, "x"):
            pass
    except OSError as exc:
        _log.debug("raw-file cache build: no stop signal at %s: %s", path, exc)


#: How long Spark must have run no stage before a build starts: the statement that scheduled
#: it has ended when its answer is ready to run, and the job computing it starts a moment later.
QUIET_S = 1.0


def _wait_idle(spark: Any, after: int | None = None) -> None:
    """Until Spark has run no stage for :data:`QUIET_S` (the query that scheduled the build
    has answered), at most :data:`IDLE_WAIT_S`.

    ``after``: the id the next Spark job would have had when the build was scheduled, while
    the statement was planned. Its own jobs come next, and the first of them may start more
    than :data:`QUIET_S` later (Spark plans a Python data source's read in a Python worker,
    which the session's first read starts): so the quiet counts only once a job numbered
    from ``after`` on has started. None: no job to wait for.
    """
    sc = spark.sparkContext
    tracker = sc.statusTracker()
    deadline = time.monotonic() + IDLE_WAIT_S
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        now = time.monotonic()
        if tracker.getActiveStageIds() or tracker.getActiveJobsIds():
            quiet_since = now
        elif after is not None and _no_job_since(spark, after):
            quiet_since = now  # the statement's job has not started yet
        elif now - quiet_since >= QUIET_S:
            return
        time.sleep(0.05)


def _no_job_since(spark: Any, after: int) -> bool:
    """Whether Spark has started no job numbered ``after`` or later (False where the next
    job's id cannot be read)."""
    next_id = _next_job_id(spark)
    return next_id is not None and next_id <= after


def _next_job_id(spark: Any) -> int | None:
    """The id Spark's scheduler gives its next job (None where it cannot be read: then a build
    waits for quiet alone)."""
    try:
        return int(spark.sparkContext._jsc.sc().dagScheduler().nextJobId())
    except Exception:
        return None


def wait_for_builds(timeout: float | None = None) -> None:
    """Until every build scheduled so far has finished (tests and benchmarks, which read the
    entries next; a query never waits for them)."""
    with _lock:
        pending = list(_pending)
    for future in pending:
        future.result(timeout)
