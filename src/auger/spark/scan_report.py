"""What scans did at run time, carried from Spark tasks back to the statement that planned them.

Rows read and records skipped under the skip options happen inside Spark tasks (the ``auger``
data source's ``read``) or, for a small LIMIT, on the driver (:mod:`auger.spark.local_scan`).
A statement that wants to hear about them passes a list of reports to the functions that build
its scan frames; each frame adds its :class:`ScanReport` to it (:func:`start_report`). The
report's :attr:`~ScanReport.token` travels to the executors in the data source's options; each
task adds one :class:`TaskFacts` under it to a PySpark accumulator, whose updates Python
workers send with the task's result (on ``local[*]`` and on a cluster alike). The driver reads
them once the rows have been fetched.

One accumulator serves every scan of a SparkContext (so none is left registered per query); its
value maps a report's id to the facts of its tasks, keyed by the splits a task read, so a task
Spark runs again (a retry, a second action on the same DataFrame) replaces its facts instead of
counting them twice. Under Spark Connect there is no SparkContext and no accumulator: reports
get no token and tasks say nothing; the query answers the same.
"""

from __future__ import annotations

import base64
import itertools
import pickle
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.storage.bounded_cache import BoundedCache

__all__ = [
    "ScanReport",
    "TaskFacts",
    "add_task_facts",
    "rows_of",
    "start_report",
    "tasks_report",
]

#: Reports whose facts the accumulator keeps before dropping the oldest (unread ones).
_KEEP_REPORTS = 1024

_ids = itertools.count(1)
_lock = threading.RLock()


@dataclass
class TaskFacts:
    """What one task (or one driver-side scan) read: its files, its rows, what it skipped.

    Attributes:
        files: the files whose splits the task read.
        rows: rows the scan delivered.
        skipped: file -> (invalid records skipped, the first line numbers of them).
    """

    files: tuple[str, ...] = ()
    rows: int = 0
    skipped: dict[str, tuple[int, list[int]]] = field(default_factory=dict)


def rows_of(spec: ScanSpec, batch: Any) -> int:
    """The rows of the files a scan batch stands for: its rows, or, where the scan only counts
    them (a weight column, :class:`~auger.scan.spec.ColumnSource` ``ROWS``: one row a batch),
    the sum of its weights."""
    weights = [name for name, source in spec.sources.items() if source == ColumnSource.ROWS]
    if not weights or batch.num_rows == 0:
        return int(batch.num_rows)
    # deferred: pyarrow's compute functions load on first use
    import pyarrow.compute as pc

    total = pc.sum(batch.column(batch.schema.get_field_index(weights[0]))).as_py()
    return int(total or 0)


Entries = dict[int, dict[tuple[Any, ...], TaskFacts]]


class _FactsParam:
    """Accumulator parameter: report id -> task key -> facts; a later update of the same task
    key replaces the earlier one. Merges run on the driver's accumulator thread, under a lock
    the readers share."""

    def zero(self, value: Entries) -> Entries:
        return OrderedDict()

    def addInPlace(self, value1: Entries, value2: Entries) -> Entries:
        with _lock:
            for report, tasks in value2.items():
                mine = value1.setdefault(report, {})
                for key, facts in tasks.items():
                    old = mine.get(key)
                    if old is None or facts.rows >= old.rows:
                        mine[key] = facts
            if isinstance(value1, OrderedDict):
                while len(value1) > _KEEP_REPORTS:
                    value1.popitem(last=False)
        return value1


#: the accumulator of the SparkContext in use, by its id: a new context's replaces the old one's
ACCUMULATORS: BoundedCache[int, Any] = BoundedCache("scan facts accumulator", 1)


def _accumulator(spark: Any) -> Any:
    """The SparkContext's facts accumulator, or None where there is none (Spark Connect)."""
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.spark.handles import is_connect

    try:
        if is_connect(spark):
            return None
        sc = spark.sparkContext
        if sc._jsc is None:  # stopped
            return None
    except Exception:
        return None
    with _lock:
        acc = ACCUMULATORS.get(id(sc))
        if acc is None:
            acc = sc.accumulator(OrderedDict(), _FactsParam())
            ACCUMULATORS.put(id(sc), acc)  # a new context: the old one's accumulator is dead
        return acc


class ScanReport:
    """The run-time facts of one scan frame of a statement.

    Attributes:
        spec: the scan's spec (its table, files and root).
        token: what the data source's tasks need to report (None: they cannot, e.g. over
            Spark Connect, or the scan runs on the driver).
    """

    def __init__(self, spec: ScanSpec, accumulator: Any = None) -> None:
        self.spec = spec
        self.id = next(_ids)
        self._acc = accumulator
        self._facts: dict[tuple[Any, ...], TaskFacts] = {}
        self.token: str | None = None
        #: files read from the raw-file cache rather than parsed (:mod:`auger.spark.cached_scan`)
        self.from_cache = 0
        if accumulator is not None:
            raw = pickle.dumps((self.id, accumulator))
            self.token = base64.b64encode(raw).decode("ascii")

    def add_local(self, facts: TaskFacts) -> None:
        """Facts of a scan run here, on the driver."""
        with _lock:
            self._facts[("driver", len(self._facts))] = facts

    def facts(self) -> list[TaskFacts]:
        """Every task's facts that arrived so far (taking them out of the accumulator)."""
        with _lock:
            if self._acc is not None:
                arrived = self._acc.value.pop(self.id, None)  # the driver's value itself
                if arrived:
                    self._facts.update(arrived)
            return list(self._facts.values())

    @property
    def ran(self) -> bool:
        """Whether any task (or driver-side read) of the scan reported."""
        return bool(self.facts())


def tasks_report(spark: Any) -> bool:
    """Whether the session's Spark tasks can report their facts (not over Spark Connect)."""
    return _accumulator(spark) is not None


def start_report(
    spark: Any, spec: ScanSpec, reports: list[ScanReport] | None, on_driver: bool = False
) -> ScanReport | None:
    """A report for a scan about to be built, added to ``reports`` (None when the statement
    does not want to hear, as when its DataFrame is planned again: then no report either);
    ``on_driver``: the scan runs here, no accumulator needed."""
    if reports is None:
        return None
    report = ScanReport(spec, None if on_driver else _accumulator(spark))
    reports.append(report)
    return report


# ---------------------------------------------------------------------------- executor side
def task_key(files: Sequence[FileSplit]) -> tuple[Any, ...]:
    """Which splits a task read: the same for a retry of the task."""
    return tuple((f.path, f.start, f.length, f.row_groups) for f in files)


def add_task_facts(token: str, files: Sequence[FileSplit], facts: TaskFacts) -> None:
    """Executor side: add one task's facts under the report of ``token``. Python workers send
    accumulator updates with the task's result."""
    report_id, acc = pickle.loads(base64.b64decode(token))
    acc.add({report_id: {task_key(files): facts}})
