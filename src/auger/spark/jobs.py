"""Running a statement on Spark: job groups, progress, cancellation and streamed Arrow batches.

This is the one place the front doors (the DB-API, the REST server, the shell) go to run a
statement's Spark work; nothing outside ``auger.spark`` touches pyspark's private names.

- A **job group** labels every Spark job a statement starts, so that cancelling the group stops
  exactly that statement. Job groups are thread-local in Spark (and copied into the threads Spark
  starts to serve results); under Spark Connect, which has no SparkContext, an *operation tag*
  plays the same part. :func:`job_group` sets whichever applies around a block.
- :func:`cancel_group` stops a group's jobs from any thread.
- :func:`running_stages` (a progress line) and :func:`group_stages` (a profile's stage timings)
  read what Spark reports about a group.
- :class:`BatchStream` pulls a DataFrame's result one partition at a time as Arrow batches, so a
  large result is never collected whole; :func:`arrow_table` takes Spark's bulk path instead.
- :class:`ResultLimit` is the server's bound on one result (``auger.result.max_rows`` and
  ``auger.result.max_bytes``): a stream given one ends with a RESOURCE error naming the limit
  once the result passes it, after the rows within it.

Nothing here starts Spark just to label or cancel a job: without a running session these are
no-ops.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from auger.errors import UserError
from auger.spark.bootstrap import connect_stages, interrupt_tag, tag_operations
from auger.spark.handles import is_connect
from auger.spark.plan_reuse import ran
from auger.storage.bounded_cache import BoundedCache

__all__ = [
    "BatchStream",
    "NoArrowSchema",
    "ResultLimit",
    "arrow_table",
    "cancel_group",
    "group_stages",
    "job_group",
    "jobs_outside",
    "keep_cancelling",
    "run_giving_way",
    "running_stages",
    "stream_schema",
    "to_arrow",
]

_log = logging.getLogger(__name__)

#: Spark shows this much of a statement as its job description.
DESCRIPTION_CHARS = 200


def _active_context(spark: Any = None) -> Any:
    """The SparkContext of ``spark`` (or the running one), or None: under Spark Connect, or when
    Spark is not running (never started just to label a job)."""
    if spark is not None:
        if is_connect(spark):
            return None
        try:
            return spark.sparkContext
        except Exception:
            return None
    try:
        # deferred: loads pyspark (heavy)
        from pyspark import SparkContext
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return None
    return SparkContext._active_spark_context


@contextmanager
def job_group(group: str, description: str, spark: Any = None) -> Iterator[None]:
    """Run the block's Spark jobs in ``group``, then restore the thread's previous group.

    Args:
        group: the group's id (what :func:`cancel_group` is given).
        description: the statement, shown (shortened) as the jobs' description in Spark's UI.
        spark: the session the jobs run on; by default the running SparkContext, or the Spark
            Connect session of this process (whose operations are tagged instead).
    """
    sc = _active_context(spark)
    if sc is None:
        # Spark Connect: an operation tag is its job group (a no-op when this process is not
        # connected either)
        untag = tag_operations(group)
        try:
            yield
        finally:
            untag()
        return
    # the thread's properties as they were (a copy, restored whole afterwards), then the three
    # of a job group in one call: four round trips where reading and restoring each key took nine
    scala = _scala_context(sc)
    saved = scala.getLocalProperties().clone()
    sc._jsc.setJobGroup(group, description[:DESCRIPTION_CHARS], True)
    try:
        yield
    finally:
        scala.setLocalProperties(saved)


#: The JVM's SparkContext of a Python SparkContext (``sc._jsc.sc()`` is a round trip each time)
#: (one: a process has one live SparkContext; a stopped context's entry goes with the next one)
SCALA_CONTEXTS: BoundedCache[int, tuple[Any, Any]] = BoundedCache("Scala SparkContexts", 1)


def _scala_context(sc: Any) -> Any:
    found = SCALA_CONTEXTS.get(id(sc))
    if found is None or found[0] is not sc:
        found = (sc, sc._jsc.sc())
        SCALA_CONTEXTS.put(id(sc), found)
    return found[1]


def cancel_group(group: str) -> None:
    """Cancel the running Spark jobs of ``group`` (its tagged operations under Spark Connect);
    safe from any thread, and a no-op when nothing runs."""
    sc = _active_context()
    if sc is None:
        interrupt_tag(group)
        return
    try:
        sc.cancelJobGroup(group)
    except Exception:
        _log.debug("cancelJobGroup(%s) failed", group, exc_info=True)


def keep_cancelling(
    group: str,
    done: threading.Event,
    interval: float,
    wanted: Callable[[], bool] = lambda: True,
    name: str = "auger-cancel",
) -> threading.Thread:
    """Cancel ``group`` again every ``interval`` seconds, in a thread, until ``done`` is set or
    ``wanted()`` turns false; returns the started thread.

    Cancelling ends the group's running jobs only: a job its statement submits afterwards (it
    was still planning, or between two stages) joins the group and would run to its end.
    """

    def run() -> None:
        while not done.wait(interval) and wanted():
            cancel_group(group)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def jobs_outside(tracker: Any, group: str) -> set[int]:
    """The active jobs of a classic session's status ``tracker`` that are not ``group``'s:
    what a background job (a cache build, a warm-up) gives way to. The tracker learns that a
    job ended a moment after its result came back, so the group's own last job may still be
    listed as active: it is not counted."""
    active = set(tracker.getActiveJobsIds())
    return active - set(tracker.getJobIdsForGroup(group)) if active else active


#: How often a background job looks for a user's job to give way to.
YIELD_POLL_S = 0.05

#: How long a background job asked to stop may take to end by itself before it is cancelled
#: (a raw-file cache build's tasks end at their next batch: 0.17-0.19 s on 300 MB of JSON).
STOP_WAIT_S = 1.0


def run_giving_way(
    spark: Any,
    group: str,
    description: str,
    run: Callable[[], Any],
    stop: Callable[[], None] | None = None,
) -> bool:
    """``run()`` (Spark jobs of a classic session, on this thread) in job group ``group``,
    given way as soon as a job outside the group runs: a background job (a raw-file cache
    build, the warm-up) holds task slots a user's job would otherwise wait for. True when
    ``run()`` ended by itself; False when it gave way (its failure is then the cancel's, and is
    not raised).

    To give way, ``stop()`` asks the group's tasks to end by themselves, where the job can be
    asked (a task that is cancelled instead loses its Python worker, killed in the middle of
    its work); whatever of the group still runs :data:`STOP_WAIT_S` later, or at once without
    ``stop``, is cancelled. A job of the group submitted after that (it was still being planned)
    is cancelled too, rather than let it hold the cores ahead of the user's job."""
    sc = spark.sparkContext
    tracker = sc.statusTracker()
    done = threading.Event()
    gave_way = threading.Event()
    cancel_from = 0.0  # when the group's jobs still running are cancelled, once it gave way

    def watch() -> None:
        nonlocal cancel_from
        try:
            while not done.wait(YIELD_POLL_S):
                if gave_way.is_set():
                    if time.monotonic() < cancel_from:
                        continue
                    active = set(tracker.getActiveJobsIds())
                    if active & set(tracker.getJobIdsForGroup(group)):
                        sc.cancelJobGroup(group)
                elif jobs_outside(tracker, group):
                    gave_way.set()
                    if stop is None:
                        sc.cancelJobGroup(group)
                    else:
                        cancel_from = time.monotonic() + STOP_WAIT_S
                        stop()
        except Exception as exc:  # Spark stopping under the group: its job fails too
            _log.debug("%s stopped watching for users' jobs: %s", group, exc)

    watcher = threading.Thread(target=watch, name=f"{group}-watch", daemon=True)
    sc.setJobGroup(group, description, True)
    watcher.start()
    try:
        run()
    except Exception:
        if gave_way.is_set():
            return False
        raise
    finally:
        done.set()
        watcher.join()
    return not gave_way.is_set()


def running_stages(group: str) -> list[tuple[int, int, int]]:
    """The unfinished stages of ``group``'s running jobs: ``(stage id, done tasks, tasks)``.

    Stages still waiting for their parents are left out. Under Spark Connect these are the
    stages the server last reported for the group's tag.
    """
    sc = _active_context()
    if sc is None:
        return [(s, done, n) for s, done, n in connect_stages(group) if done < n]
    tracker = sc.statusTracker()
    out = []
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        if job is None or job.status != "RUNNING":
            continue
        for stage_id in job.stageIds:
            stage = tracker.getStageInfo(stage_id)
            if stage is None or stage.numCompletedTasks >= stage.numTasks:
                continue
            if stage.numActiveTasks == 0 and stage.numCompletedTasks == 0:
                continue  # waiting for its parents
            out.append((stage.stageId, stage.numCompletedTasks, stage.numTasks))
    return out


def group_stages(group: str) -> list[dict[str, Any]]:
    """The stages of ``group``'s jobs with their timings, for a query profile (best effort;
    none under Spark Connect)."""
    sc = _active_context()
    if sc is None:
        return []
    out: list[dict[str, Any]] = []
    try:
        tracker = sc.statusTracker()
        store = sc._jsc.sc().statusStore()
        for job_id in sorted(tracker.getJobIdsForGroup(group)):
            info = tracker.getJobInfo(job_id)
            for stage_id in sorted(info.stageIds if info else ()):
                out.append(_stage_record(store, job_id, stage_id))
    except Exception:
        _log.debug("stage timings unavailable", exc_info=True)
    return out


def _stage_record(store: Any, job_id: int, stage_id: int) -> dict[str, Any]:
    record: dict[str, Any] = {"jobId": job_id, "stageId": stage_id}
    try:
        data = store.lastStageAttempt(stage_id)
    except Exception:
        return record

    def opt_ms(value: Any) -> int | None:
        try:
            return int(value.get().getTime()) if value.isDefined() else None
        except Exception:
            return None

    record.update(
        {
            "name": str(data.name()),
            "status": str(data.status()),
            "numTasks": int(data.numTasks()),
            "numCompleteTasks": int(data.numCompleteTasks()),
            "numActiveTasks": int(data.numActiveTasks()),
            "submissionTime": opt_ms(data.submissionTime()),
            "firstTaskLaunchedTime": opt_ms(data.firstTaskLaunchedTime()),
            "completionTime": opt_ms(data.completionTime()),
            "executorRunTime": int(data.executorRunTime()),
            "inputRecords": int(data.inputRecords()),
            "outputRecords": int(data.outputRecords()),
            "shuffleReadRecords": int(data.shuffleReadRecords()),
            "shuffleWriteRecords": int(data.shuffleWriteRecords()),
        }
    )
    record["label"] = _stage_label(store, stage_id, record)
    return record


#: Spark's names for the steps inside a stage, in the words a profile shows.
_STEP_WORDS = (
    ("scan", "scan"),
    ("exchange", "shuffle"),
    ("aggregate", "aggregate"),
    ("sort", "sort"),
    ("join", "join"),
    ("window", "window"),
    ("limit", "limit"),
    ("union", "union"),
    ("filter", "filter"),
    ("project", "project"),
    ("writefiles", "write files"),
    ("execute", "write files"),
)


def _stage_label(store: Any, stage_id: int, record: dict[str, Any]) -> str:
    """What a stage does, in a few words: the operators Spark's UI groups it by (scan parquet,
    shuffle...) and the rows it read, shuffled and wrote; Spark's own name (the call site
    that started the job) says nothing a user can act on."""
    steps: list[str] = []
    try:
        clusters = [store.operationGraphForStage(stage_id).rootCluster()]
        while clusters:
            cluster = clusters.pop(0)
            name = re.sub(r"\s*\(\d+\)$", "", str(cluster.name())).strip()
            low = name.lower().replace(" ", "")
            for key, word in _STEP_WORDS:
                if key in low:
                    word = name.lower() if key == "scan" else word
                    if word not in steps:
                        steps.append(word)
                    break
            children = cluster.childClusters()
            clusters.extend(children.apply(i) for i in range(children.size()))
    except Exception:
        _log.debug("no operation graph for stage %s", stage_id, exc_info=True)
    facts = []
    if record.get("inputRecords"):
        facts.append(f"read {record['inputRecords']:,} rows")
    if record.get("shuffleReadRecords"):
        facts.append(f"took {record['shuffleReadRecords']:,} shuffled rows")
    if record.get("shuffleWriteRecords"):
        facts.append(f"shuffled {record['shuffleWriteRecords']:,} rows")
    if record.get("outputRecords"):
        facts.append(f"wrote {record['outputRecords']:,} rows")
    if not steps and not facts:
        return "compute the result"
    head = " → ".join(steps) if steps else "compute"
    return head + (f" ({', '.join(facts)})" if facts else "")


# ------------------------------------------------------------------ results as Arrow
def arrow_table(df: Any, group: str, description: str) -> pa.Table:
    """The whole result of ``df`` as one Arrow table (Spark's bulk path: all partitions at
    once), its jobs in ``group``."""
    with job_group(group, description):
        return to_arrow(df)


def to_arrow(df: Any) -> pa.Table:
    """``df.toArrow()``: the same table, without a Spark job when the rows are on the driver.

    Spark folds a query over constants or over a small table read on the driver (``SELECT 1
    FROM (VALUES(1))``, a filter over a few small files) into rows held by the physical plan
    itself, yet ``toArrow`` still schedules a job to ship them (a few hundred milliseconds on a
    busy machine, most of such a query's time). Those rows are converted here by the converter
    that job would run, with the session's time zone and Arrow settings, so types and values
    are the same. A query without FROM (``SELECT 1``) is a projection of Spark's one empty row:
    its one row is computed here by the projection the job's task would run. Every other plan
    (and Spark Connect) takes ``toArrow``.

    Whether the run gave the whole answer is told to the plans ``df`` may be kept by
    (:func:`auger.spark.plan_reuse.ran`).
    """
    try:
        table = _driver_table(df)
        if table is None:
            table = df.toArrow() if is_connect(df.sparkSession) else _collected(df)
    except BaseException:
        ran(df, False)
        raise
    ran(df, True)
    return table


def _collected(df: Any) -> pa.Table:
    """``df.toArrow()`` of a classic session, in fewer round trips: the settings it reads come
    from the session's kept conf object (pyspark fetches the conf object and converts a Java list
    of names and of values for them, a dozen round trips), and Spark's call site (a label in its
    UI) is not set around the job."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql.pandas.serializers import ArrowCollectSerializer

    conf = _session_conf(df.sparkSession)
    large = conf.getConfString("spark.sql.execution.arrow.useLargeVarTypes") == "true"
    schema = _arrow_schema(df, large)
    served = df._jdf.collectAsArrowToPython()
    batches = list(_served_frames(df, served, ArrowCollectSerializer()))
    if not batches:
        return schema.empty_table()
    return pa.Table.from_batches(batches).cast(schema)


#: How long a collect waits for its serving thread's result once the stream has ended or failed
#: (the thread has it within milliseconds unless it died)
SERVED_RESULT_WAIT_S = 60


def _served_result(df: Any, server: Any) -> bool:
    """Wait for the result of a collect's serving thread once Python is done with its stream:
    raise the job's failure as pyspark raises it; False when no result came within
    :data:`SERVED_RESULT_WAIT_S` (the thread died).

    Spark's serving thread records a result only once Python has connected to it, and only if
    it ends by an exception Scala counts as non-fatal: when Python never connected (the
    connection or its authentication failed, or came after the server's 15 seconds) or the
    thread died of an error such as the JVM's ``OutOfMemoryError`` (seen while Spark compiled
    the code of a struct rebuilt at 63 levels), an unbounded ``getResult()`` waits for ever,
    and with it the statement and the JVM thread of its py4j connection, whose next call then
    hangs too."""
    # deferred: loads py4j with pyspark (heavy)
    from py4j.java_gateway import is_instance_of

    # deferred: loads py4j with pyspark (heavy)
    from py4j.protocol import Py4JJavaError

    # deferred: loads pyspark (heavy)
    from pyspark.errors.exceptions.captured import unwrap_spark_exception

    sc = df.sparkSession.sparkContext
    try:
        with unwrap_spark_exception():
            server.getResult(_result_wait(sc))
    except Py4JJavaError as exc:
        if is_instance_of(sc._gateway, exc.java_exception, "java.util.concurrent.TimeoutException"):
            return False
        raise
    return True


def _serving_died() -> UserError:
    """The error of a result whose serving thread in the JVM died with no result to give."""
    return UserError.system(
        "Spark's driver failed while it served the answer (its serving thread ended without a "
        "result: an error of the JVM, such as running out of memory, is in the driver's log)",
        ["The rows it sent may be incomplete; none are returned"],
    )


def _served_frames(df: Any, served: Any, serializer: Any) -> Iterator[Any]:
    """What Spark serves in one stream (a collect's ``[port, secret, server]``), read as it
    comes; then the serving thread's result: its failure, raised as pyspark raises it, or
    :func:`_serving_died`'s error when it has none. Closing the generator early closes the
    socket, which ends the serving."""
    # deferred: loads pyspark (heavy)
    from pyspark.util import _load_from_socket

    # by index: unpacking a Java array asks its length again before every element
    port, secret, server = served[0], served[1], served[2]
    try:
        with _load_from_socket((port, secret), serializer) as stream:
            yield from stream
    except GeneratorExit:
        raise  # closed by the reader: no result is waited for
    except BaseException:
        _served_result(df, server)  # the job's failure, when the JVM has one to say
        raise
    if not _served_result(df, server):
        # the stream looked whole, yet the serving thread died: Spark ends the stream in a
        # ``finally``, so a thread killed by a JVM error while the job ran still sends an end,
        # after none or some of the rows
        raise _serving_died()


class _ServedFailure:
    """The serving thread of a streamed result (``toLocalIteratorAndServe``), as pyspark's
    socket reader asks it for the failure it told Python of: that failure, raised as pyspark
    raises it, or :func:`_serving_died`'s error, never an unbounded wait. The thread answers
    with a failure only for an exception Scala counts as non-fatal; after an error of the
    JVM's own (``OutOfMemoryError``) it has none, and pyspark's ``getResult()`` would wait for
    ever, and if it returned, the stream would end there as if the rows had."""

    def __init__(self, df: Any, server: Any) -> None:
        self._df = df
        self._server = server

    def getResult(self) -> None:  # the JVM server's method, as pyspark calls it
        _served_result(self._df, self._server)
        raise _serving_died()


#: The JVM's ``Duration`` of :data:`SERVED_RESULT_WAIT_S` seconds, by SparkContext and seconds
#: (making one is five round trips; one context lives at a time)
RESULT_WAITS: BoundedCache[int, tuple[Any, int, Any]] = BoundedCache("result waits", 1)


def _result_wait(sc: Any) -> Any:
    found = RESULT_WAITS.get(id(sc))
    if found is None or found[0] is not sc or found[1] != SERVED_RESULT_WAIT_S:
        duration = sc._jvm.scala.concurrent.duration.Duration
        found = (sc, SERVED_RESULT_WAIT_S, duration.create(SERVED_RESULT_WAIT_S, "seconds"))
        RESULT_WAITS.put(id(sc), found)
    return found[2]


#: The SQL conf object of a classic session (``spark._jconf`` is two round trips each time; the
#: object is the session's own for its life, and ``SET`` changes it in place)
#: (a few: each engine's session, and sessions come and go in tests)
SESSION_CONFS: BoundedCache[int, tuple[Any, Any]] = BoundedCache("SQL confs by session", 16)


def _session_conf(spark: Any) -> Any:
    found = SESSION_CONFS.get(id(spark))
    if found is None or found[0] is not spark:
        found = (spark, spark._jconf)
        SESSION_CONFS.put(id(spark), found)
    return found[1]


#: the physical plan's root when its rows are on the driver: the local rows, or those rows
#: merged into fewer partitions (order kept)
_DRIVER_ROOTS = frozenset({"LocalTableScan", "Coalesce"})


def _driver_rows(plan: Any, jvm: Any) -> Any:
    """The rows (a Scala ``Seq`` of ``InternalRow``) of a physical plan that needs no job to
    compute them, or None.

    - the local rows (``LocalTableScan``), or those rows merged into fewer partitions;
    - the one row of a query without FROM: a projection of Spark's one empty row (``Project``
      over ``Scan OneRowRelation``, inside its generated-code stage or not), computed from the
      projection's expressions as a task would, when no subquery needs a job of its own first.
    """
    name = str(plan.nodeName())
    if name in _DRIVER_ROOTS:
        if name == "Coalesce":
            plan = plan.child()
            if str(plan.nodeName()) != "LocalTableScan":
                return None
        return plan.rows()
    if name.startswith("WholeStageCodegen"):
        plan = plan.child()
    if str(plan.nodeName()) != "Project" or str(plan.child().nodeName()) != "Scan OneRowRelation":
        return None
    if not plan.subqueries().isEmpty():
        return None
    # interpreted, not generated: every generated class has the same name, which py4j's method
    # cache would confuse; for one row there is nothing to compile for anyway (there is no
    # input row, so nothing to bind either)
    expressions = jvm.org.apache.spark.sql.catalyst.expressions
    projection = expressions.InterpretedUnsafeProjection.createProjection(plan.projectList())
    projection.initialize(0)  # the one partition's index: what seeds rand() in the task
    row = projection.apply(jvm.org.apache.spark.sql.catalyst.InternalRow.empty()).copy()
    return jvm.PythonUtils.toSeq([row])


def _driver_table(df: Any) -> pa.Table | None:
    """The result of a plan whose rows Spark holds on the driver, as ``toArrow`` gives it;
    None for any other plan."""
    if is_connect(df.sparkSession):
        return None
    plan = df._jdf.queryExecution().executedPlan()
    rows = _driver_rows(plan, df.sparkSession._jvm)
    if rows is None:
        return None
    spark = df.sparkSession
    # one round trip each (a Python list handed to the JVM costs one per element)
    conf = _session_conf(spark)
    zone = conf.getConfString("spark.sql.session.timeZone")
    large = conf.getConfString("spark.sql.execution.arrow.useLargeVarTypes") == "true"
    structs = conf.getConfString("spark.sql.execution.pandas.structHandlingMode")
    per_batch = int(conf.getConfString("spark.sql.execution.arrow.maxRecordsPerBatch"))
    schema = _arrow_schema(df, large)
    streams = _arrow_converters(spark._jvm).toBatchWithSchemaIterator(
        rows.iterator(),
        df._jdf.schema(),
        per_batch,
        _MAX_DRIVER_BATCH_BYTES,
        zone,
        structs == "legacy",  # as Spark's own collection decides it
        large,
    )
    batches: list[pa.RecordBatch] = []
    while streams.hasNext():
        batches.extend(pa.ipc.open_stream(bytes(streams.next())).read_all().to_batches())
    if str(plan.nodeName()) != "LocalTableScan":
        plan = plan.child()  # under a Coalesce (a one-row projection has no scan to count)
    if str(plan.nodeName()) == "LocalTableScan":
        # what the job would have counted: a query profile reads the scan's rows from here
        plan.longMetric("numOutputRows").add(rows.size())
    if not batches:
        return schema.empty_table()
    return pa.Table.from_batches(batches).cast(schema)


#: Arrow batches built on the driver are cut at this size (the rows are few: a bound only)
_MAX_DRIVER_BATCH_BYTES = 64 * 1024 * 1024

#: Spark's Arrow converter object, per JVM (looking it up takes several round trips); a JVM
#: started again after one died is a new key, so a few are kept
CONVERTERS: BoundedCache[int, tuple[Any, Any]] = BoundedCache("Arrow converters by JVM", 4)


def _arrow_converters(jvm: Any) -> Any:
    key = id(jvm)
    found = CONVERTERS.get(key)
    if found is None or found[0] is not jvm:
        package = jvm.org.apache.spark.sql.execution.arrow
        found = (jvm, getattr(getattr(package, "ArrowConverters$"), "MODULE$"))
        CONVERTERS.put(key, found)
    return found[1]


def _arrow_schema(df: Any, large: bool | None = None) -> pa.Schema:
    """The Arrow schema Spark uses to ship ``df``'s batches (as ``DataFrame.toArrow`` builds it);
    ``large``: the session's large-types setting, when already read."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql.pandas.types import to_arrow_schema

    if large is None:
        conf = df.sparkSession.conf
        large = conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    return to_arrow_schema(
        df.schema,
        error_on_duplicated_field_names_in_struct=True,
        timezone="UTC",
        prefers_large_types=large,
    )


@dataclass
class ResultLimit:
    """The most rows and bytes (Arrow's in-memory size) one result may send; 0: no bound.

    Like Drill's ``exec.query.max_rows`` a bound of the server's, but a result that passes it
    is an error, not a quietly shorter answer: the rows within the bound go out, then the
    stream ends with a RESOURCE error naming the option. Counting is per stream, so one limit
    object serves one result.
    """

    rows: int = 0
    bytes: int = 0
    rows_sent: int = 0
    bytes_sent: int = 0
    #: set once the result passed the bound: the next batch asked for is this error
    passed: UserError | None = None

    @classmethod
    def from_options(cls, options: Any) -> ResultLimit:
        """The limit a session's options set (``options.get(name)``, as sessions have it)."""
        return cls(
            max(int(options.get("auger.result.max_rows") or 0), 0),
            max(int(options.get("auger.result.max_bytes") or 0), 0),
        )

    def admit(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch``, or the part of it within the bound (the error follows with the next
        call); raises the RESOURCE error once nothing more may be sent."""
        if self.passed is not None:
            raise self.passed
        if self.rows and self.rows_sent + batch.num_rows > self.rows:
            self.passed = self._error(f"{self.rows:,} rows", "auger.result.max_rows")
            batch = batch.slice(0, self.rows - self.rows_sent)
        if self.bytes and self.bytes_sent + batch.nbytes > self.bytes:
            self.passed = self._error(f"{self.bytes:,} bytes", "auger.result.max_bytes")
            raise self.passed
        if self.passed is not None and not batch.num_rows:
            raise self.passed
        self.rows_sent += batch.num_rows
        self.bytes_sent += batch.nbytes
        return batch

    @staticmethod
    def _error(bound: str, option: str) -> UserError:
        return UserError.resource(
            f"The query's result is larger than the server's limit of {bound} ({option})",
            [
                "Fix: ask for fewer rows or columns (a LIMIT, a WHERE, an aggregate), or ask "
                f"an administrator to raise {option}"
            ],
        )

    def batches(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """``batches`` within the bound, then the error if there were more."""
        for batch in batches:
            yield self.admit(batch)
            if self.passed is not None:  # the rest of that batch was cut off
                raise self.passed


class NoArrowSchema(Exception):
    """The DataFrame has a column type with no Arrow equivalent on the Python side; take
    :func:`arrow_table` instead."""


def stream_schema(df: Any) -> pa.Schema:
    """The schema of the batches :class:`BatchStream` ships for ``df``, known before it runs.

    Raises:
        NoArrowSchema: a column type has no Arrow equivalent.
    """
    try:
        return _arrow_schema(df)
    except Exception as exc:
        raise NoArrowSchema(str(exc)) from exc


class BatchStream:
    """Arrow batches of a DataFrame, pulled one partition at a time, its jobs in ``group``.

    Spark turns each partition into Arrow IPC batches (``toArrowBatchRdd``) and serves them to
    Python through the same local-iterator protocol as ``DataFrame.toLocalIterator``: a job per
    partition, run only when the previous partition has been consumed (with one partition of
    prefetch). A result of one partition is collected and served in one buffered stream
    instead: the driver holds that partition either way, and the protocol's unbuffered small
    writes wait over TCP for Python's delayed acknowledgements, up to 40 ms a partition. Under
    Spark Connect the server streams the batches as the query produces them.
    ``batches_read`` counts what has been pulled so far. A result whose rows Spark already
    holds on the driver (constants, a small scan read there) is served from those rows, with no
    job.

    With a ``limit``, the stream ends with the limit's RESOURCE error once the result passes
    it (the rows within it come first); the JVM stops serving the rest.

    Raises:
        NoArrowSchema: a column type has no Arrow equivalent.
    """

    def __init__(
        self, df: Any, group: str, description: str, limit: ResultLimit | None = None
    ) -> None:
        try:
            self.schema = _arrow_schema(df)
        except Exception as exc:
            raise NoArrowSchema(str(exc)) from exc
        self.batches_read = 0
        self.limit = limit
        self._frames: Iterator[Any] = iter(())
        #: the DataFrame whose run is not over yet (None once it ended): its plans are told
        #: how it ended (:func:`auger.spark.plan_reuse.ran`)
        self._running: Any = df
        try:
            self._start(df, group, description)
        except BaseException:
            self._ended(False)
            raise

    def _start(self, df: Any, group: str, description: str) -> None:
        if is_connect(df.sparkSession):
            self._frames = _connect_batches(df, self.schema, group, description)
            return
        with job_group(group, description):
            held = _driver_table(df)
        if held is not None:
            self._frames = iter(held.to_batches())
            return
        # deferred: loads pyspark (heavy)
        from pyspark.serializers import NoOpSerializer

        # deferred: loads pyspark (heavy)
        from pyspark.util import _local_iterator_from_socket

        sc = df.sparkSession.sparkContext
        # The JVM thread serving this Python thread may never have had the session made active
        # (a statement run on a worker thread): SQL settings read while the scan is planned would
        # then be Spark's defaults, not the session's, and auger's scans refuse to run without
        # the session's filter push-down setting.
        sc._jvm.org.apache.spark.sql.SparkSession.setActiveSession(df.sparkSession._jsparkSession)
        with job_group(group, description):
            jrdd = df._jdf.toArrowBatchRdd()
            if jrdd.getNumPartitions() == 1:
                # the local-iterator protocol writes a partition's flag, lengths and bytes
                # unbuffered: over TCP the second write waits for Python's delayed
                # acknowledgement of the first (up to 40 ms on Linux), most of a small result's
                # time; a collect is written through a buffer
                served = sc._jvm.PythonRDD.collectAndServe(jrdd)
                self._frames = _served_frames(df, served, NoOpSerializer())
                return
            served = sc._jvm.PythonRDD.toLocalIteratorAndServe(jrdd, True)
        sock_info = (served[0], served[1], _ServedFailure(df, served[2]))
        self._frames = _local_iterator_from_socket(sock_info, NoOpSerializer())

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self

    def close(self) -> None:
        """Stop serving the result: the JVM is told to stop and the socket closes.

        Closing the generator drops pyspark's socket reader, which drains the partition
        already on its way, tells the JVM's serving thread to stop, and closes the socket. A
        job already started for a later partition is the job group's to cancel.
        """
        frames, self._frames = self._frames, iter(())
        close = getattr(frames, "close", None)
        if callable(close):
            close()
        self._ended(False)

    def _ended(self, whole: bool) -> None:
        """The run is over, with the whole answer or not; said once."""
        df, self._running = self._running, None
        if df is not None:
            ran(df, whole)

    def __next__(self) -> pa.RecordBatch:
        if self.limit is not None and self.limit.passed is not None:
            self.close()  # the last batch was cut at the limit: the rest is not wanted
            raise self.limit.passed
        try:
            frame = next(self._frames)
        except StopIteration:
            self._ended(True)
            raise
        except BaseException:
            self._ended(False)
            raise
        if isinstance(frame, pa.RecordBatch):  # Spark Connect, or rows held on the driver
            batch = frame
        else:
            batch = pa.ipc.read_record_batch(pa.py_buffer(frame), self.schema)
        self.batches_read += 1
        if self.limit is not None:
            try:
                batch = self.limit.admit(batch)
            except UserError:
                self.close()
                raise
        return batch


def _connect_batches(
    df: Any, schema: pa.Schema, group: str, description: str
) -> Iterator[pa.RecordBatch]:
    """The result batches of a Spark Connect DataFrame, streamed from the server.

    The request is sent here, inside the statement's tag, so cancelling the group reaches it.
    Batches are cast to the schema a classic session would ship (the server may choose e.g.
    large string types).
    """
    client = df.sparkSession.client
    plan = df._plan.to_proto(client)
    with job_group(group, description):
        stream = client.to_table_as_iterator(plan, df._plan.observations)
        first = _next_table(stream)
    return _cast_tables(first, stream, schema)


def _next_table(stream: Iterator[Any]) -> pa.Table | None:
    for item in stream:
        if isinstance(item, pa.Table):
            return item
    return None


def _cast_tables(
    first: pa.Table | None, stream: Iterator[Any], schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    table = first
    while table is not None:
        if table.num_rows:
            if table.schema != schema:
                columns = [c.cast(f.type) for c, f in zip(table.columns, schema, strict=True)]
                table = pa.Table.from_arrays(columns, schema=schema)
            yield from table.to_batches()
        table = _next_table(stream)
