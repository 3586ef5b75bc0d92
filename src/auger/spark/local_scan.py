"""Small LIMIT scans read on the driver: ``SELECT * FROM t LIMIT 10`` without a Spark job.

A pushed-down LIMIT makes the scan one task that reads files in order until it has enough rows.
For a handful of rows the cost of that task is nearly all fixed: planning the Python data
source, starting or waking a Python worker, shipping Arrow batches into the JVM. Running the very
same scan (``run_scan`` with the same spec) on the driver and handing Spark the rows as a local
relation gives identical rows, types and errors, and Spark then answers the rest of the query
(expressions, aliases) over a ``LocalTableScan`` without scheduling anything.

Taken only when the limit is at most ``auger.scan.local_limit_rows`` (0 turns it off), so the
driver never holds more than a few batches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from auger.scan.plan import PlannedScan

__all__ = ["DEFAULT_LOCAL_LIMIT_ROWS", "local_limit_frame", "local_limit_table"]

#: The largest pushed LIMIT read on the driver by default.
DEFAULT_LOCAL_LIMIT_ROWS = 10_000


def local_limit_table(planned: PlannedScan, options: Mapping[str, Any]) -> pa.Table | None:
    """The scan's first rows read here, in Spark's Arrow schema; None when the scan is not a
    small pushed LIMIT."""
    spec = planned.spec
    most = int(options.get("auger.scan.local_limit_rows", DEFAULT_LOCAL_LIMIT_ROWS) or 0)
    if most <= 0 or spec.limit is None or spec.limit > most:
        return None
    import pyarrow as pa

    from auger.formats.skips import recording
    from auger.scan.run import run_scan
    from auger.spark.scan_report import TaskFacts, start_report
    from auger.types.spark import spark_arrow_schema

    target = spark_arrow_schema(planned.schema.to_spark())
    batch_rows = max(1, min(int(spec.options.get("auger.scan.batch_rows", 4096)), spec.limit))
    report = start_report(None, spec, on_driver=True)
    with recording() as skipped:
        batches = list(run_scan(spec, None, batch_rows, target))
    if report is not None:
        # which files the LIMIT let it open is not known here: no files, only rows
        report.add_local(TaskFacts((), sum(b.num_rows for b in batches), skipped))
    return pa.Table.from_batches(batches, schema=target)


def local_limit_frame(spark: Any, planned: PlannedScan, options: Mapping[str, Any]) -> Any:
    """A DataFrame of the scan's first rows read here, or None when the scan is not small."""
    table = local_limit_table(planned, options)
    if table is None:
        return None
    spark_schema = planned.schema.to_spark()
    if not table.num_rows:  # Spark cannot build a frame of no Arrow chunks
        return spark.createDataFrame([], spark_schema)
    return spark.createDataFrame(table, schema=spark_schema)
