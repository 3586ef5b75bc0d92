"""Small scans read on the driver: ``SELECT * FROM t LIMIT 10``, or any query over a few small
files, without a Python data source task.

A pushed-down LIMIT makes the scan one task that reads files in order until it has enough rows.
For a handful of rows the cost of that task is nearly all fixed: planning the Python data
source, starting or waking a Python worker, shipping Arrow batches into the JVM. Running the very
same scan (``run_scan`` with the same spec) on the driver and handing Spark the rows as a local
relation gives identical rows, types and errors, and Spark then answers the rest of the query
(expressions, aliases) over a ``LocalTableScan`` without scheduling anything.

Taken only when the limit is at most ``auger.scan.local_limit_rows`` (0 turns it off), so the
driver never holds more than a few batches.

The same holds for a scan of whole files that together are at most ``auger.scan.local_bytes``
(0 turns it off): a warm ``GROUP BY`` over a file of a few hundred kilobytes otherwise spends most
of its time planning the data source and waking a Python worker. Spark still runs the rest of the
query over the local relation, so only the reading moves.

The server's memory is what this bound protects, so it counts what the files hold once
decompressed (:mod:`auger.storage.read_budget`), not their size on disk: a small gzip file that
expands past it is read by Spark's tasks. The estimate is checked while reading too: the
decompressed bytes and the Arrow batches the read produces are counted, and past the bound the
read stops and the scan goes to Spark's tasks after all.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from auger.types.spark import schema_to_spark

if TYPE_CHECKING:
    import pyarrow as pa

    from auger.scan.plan import PlannedScan
    from auger.spark.scan_report import ScanReport

__all__ = [
    "DEFAULT_LOCAL_BYTES",
    "DEFAULT_LOCAL_LIMIT_ROWS",
    "local_limit_frame",
    "local_limit_table",
    "small_input_frame",
    "small_input_table",
]

_log = logging.getLogger(__name__)

#: The largest pushed LIMIT read on the driver by default.
DEFAULT_LOCAL_LIMIT_ROWS = 10_000
#: The most bytes of whole files read on the driver by default.
DEFAULT_LOCAL_BYTES = 4 * 1024 * 1024


def local_limit_table(
    planned: PlannedScan,
    options: Mapping[str, Any],
    reports: list[ScanReport] | None = None,
) -> pa.Table | None:
    """The scan's first rows read here, in Spark's Arrow schema; None when the scan is not a
    small pushed LIMIT, or its rows pass the byte bound. What it read goes to ``reports``."""
    spec = planned.spec
    most = int(options.get("auger.scan.local_limit_rows", DEFAULT_LOCAL_LIMIT_ROWS) or 0)
    if most <= 0 or spec.limit is None or spec.limit > most:
        return None
    batch_rows = max(1, min(int(spec.options.get("auger.scan.batch_rows", 4096)), spec.limit))
    # which files the LIMIT let it open is not known here: no files, only rows; a few rows
    # may still be huge ones (a compressed file of one enormous line): the byte bound holds
    bound = int(options.get("auger.scan.local_bytes", DEFAULT_LOCAL_BYTES) or 0)
    most = bound if bound > 0 else DEFAULT_LOCAL_BYTES
    return _driver_table(planned, batch_rows, (), reports, most)


def small_input_table(
    planned: PlannedScan,
    options: Mapping[str, Any],
    reports: list[ScanReport] | None = None,
) -> pa.Table | None:
    """The whole scan read here, in Spark's Arrow schema; None unless every file's size is known
    and together they are at most ``auger.scan.local_bytes``."""
    spec = planned.spec
    most = int(options.get("auger.scan.local_bytes", DEFAULT_LOCAL_BYTES) or 0)
    if most <= 0 or not spec.files:
        return None
    from auger.storage.uncompressed import uncompressed_estimate

    total = 0
    for split in spec.files:
        # a size of 0 may mean "not known" (a listing without sizes): Spark reads those
        if split.is_range or split.size <= 0:
            return None
        total += uncompressed_estimate(split.path, split.size)
        if total > most:
            return None
    batch_rows = max(1, int(spec.options.get("auger.scan.batch_rows", 4096)))
    return _driver_table(planned, batch_rows, tuple(f.path for f in spec.files), reports, most)


#: The Arrow batches of a read on the driver may come to this many times its byte bound (the
#: columns of a text file take more room in Arrow than in the file) before it gives up.
ARROW_ROOM = 4


def _driver_table(
    planned: PlannedScan,
    batch_rows: int,
    files: tuple[str, ...],
    reports: list[ScanReport] | None,
    most: int = 0,
) -> pa.Table | None:
    """Run the scan's reader here (the very code a data source task runs), reporting what it
    read as a task would.

    With ``most`` > 0 the read is bounded: past ``most`` decompressed bytes, or past
    ``ARROW_ROOM`` times that in Arrow batches, it stops and the answer is None (Spark's tasks
    read the scan instead).
    """
    import pyarrow as pa

    from auger.formats.skips import recording
    from auger.scan.run import run_scan
    from auger.spark.scan_report import TaskFacts, start_report
    from auger.storage.read_budget import BudgetExceeded, budget
    from auger.types.spark import spark_arrow_schema

    spec = planned.spec
    target = spark_arrow_schema(schema_to_spark(planned.schema))
    batches: list[pa.RecordBatch] = []
    held = 0
    with recording() as skipped:
        if most > 0:
            try:
                with budget(most):
                    for batch in run_scan(spec, None, batch_rows, target):
                        held += batch.nbytes
                        if held > most * ARROW_ROOM:
                            raise BudgetExceeded(f"{held:,} bytes of batches")
                        batches.append(batch)
            except BudgetExceeded as exc:
                _log.info("a scan read in the server passed its bound (%s): Spark reads it", exc)
                return None
        else:
            batches = list(run_scan(spec, None, batch_rows, target))
    report = start_report(None, spec, reports, on_driver=True)
    if report is not None:
        report.add_local(TaskFacts(files, sum(b.num_rows for b in batches), skipped))
    return pa.Table.from_batches(batches, schema=target)


def local_limit_frame(
    spark: Any,
    planned: PlannedScan,
    options: Mapping[str, Any],
    reports: list[ScanReport] | None = None,
) -> Any:
    """A DataFrame of the scan's first rows read here, or None when the scan is not small."""
    return _frame(spark, planned, local_limit_table(planned, options, reports))


def small_input_frame(
    spark: Any,
    planned: PlannedScan,
    options: Mapping[str, Any],
    reports: list[ScanReport] | None = None,
) -> Any:
    """A DataFrame of the whole scan read here, or None when its files are not small."""
    return _frame(spark, planned, small_input_table(planned, options, reports))


def _frame(spark: Any, planned: PlannedScan, table: pa.Table | None) -> Any:
    if table is None:
        return None
    spark_schema = schema_to_spark(planned.schema)
    if not table.num_rows:  # Spark cannot build a frame of no Arrow chunks
        return spark.createDataFrame([], spark_schema)
    # one partition: Spark would split these rows over the cores, and then a GROUP BY, ORDER BY
    # or DISTINCT needs a shuffle (two stages and several tasks) where one task over a few
    # thousand rows is quicker; a plain projection or filter is folded into rows on the
    # driver all the same
    return spark.createDataFrame(table, schema=spark_schema).coalesce(1)
