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

A whole-file read's DataFrame is kept for the next statement over the same files, in the
engine's :class:`~auger.spark.kept_frames.KeptFrames` the caller passes: the rows, and the local
relation Spark built of them, are the same for as long as the spec is (its files' paths, sizes
and modification times, the format's and the session's reader options, the columns). A warm
query over a small file then neither reads it nor ships it to the JVM again; only its scan
figures are reported again, as the read reported them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from auger.formats.skips import recording
from auger.scan.run import run_scan
from auger.spark.handles import is_connect
from auger.spark.scan_report import TaskFacts, rows_of, start_report
from auger.storage.read_budget import BudgetExceeded, budget
from auger.storage.uncompressed import uncompressed_estimate
from auger.types.spark import schema_to_spark, spark_arrow_schema

if TYPE_CHECKING:
    from auger.scan.plan import PlannedScan
    from auger.spark.kept_frames import KeptFrames
    from auger.spark.scan_report import ScanReport, TaskFacts

__all__ = [
    "DEFAULT_LOCAL_ANSWER_BYTES",
    "DEFAULT_LOCAL_BYTES",
    "DEFAULT_LOCAL_LIMIT_ROWS",
    "local_limit_frame",
    "local_limit_table",
    "small_input_frame",
    "small_input_table",
    "whole_answer_table",
]

_log = logging.getLogger(__name__)

#: The largest pushed LIMIT read on the driver by default.
DEFAULT_LOCAL_LIMIT_ROWS = 10_000
#: The most bytes of whole files read on the driver by default.
DEFAULT_LOCAL_BYTES = 4 * 1024 * 1024
#: The most bytes of whole files read on the driver as the answer of a bare ``SELECT *``.
#: Large, because Spark cannot do better past it on its default heap: a few hundred megabytes
#: of answer run its 1 GiB driver out of memory (the tasks' results are held there; measured
#: with 320 MB of Arrow from a 200-column Parquet file, which the driver's read answers in
#: 0.3-0.8 s). The read gives up at twice the bound, and a server's row cap skips it.
DEFAULT_LOCAL_ANSWER_BYTES = 512 * 1024 * 1024
_DEFAULTS = {
    "auger.scan.local_bytes": DEFAULT_LOCAL_BYTES,
    "auger.scan.local_answer_bytes": DEFAULT_LOCAL_ANSWER_BYTES,
}
#: The Arrow batches of a read on the driver may come to this many times its byte bound (the
#: columns of a text file take more room in Arrow than in the file) before it gives up.
ARROW_ROOM = 4


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


def whole_answer_table(
    planned: PlannedScan,
    options: Mapping[str, Any],
    reports: list[ScanReport] | None = None,
) -> pa.Table | None:
    """The whole scan read here as the answer of a bare ``SELECT *``, in Spark's Arrow schema;
    None unless every file's size is known and together they are at most
    ``auger.scan.local_answer_bytes``, and the batches stay within twice that."""
    # every row is the answer, held until it is fetched: less room than for a read that
    # Spark goes on to reduce
    read = _whole_files_read(planned, options, reports, "auger.scan.local_answer_bytes", room=2)
    return None if read is None else read[0]


def small_input_table(
    planned: PlannedScan,
    options: Mapping[str, Any],
    reports: list[ScanReport] | None = None,
) -> pa.Table | None:
    """The whole scan read here, in Spark's Arrow schema; None unless every file's size is known
    and together they are at most ``auger.scan.local_bytes``."""
    read = _whole_files_read(planned, options, reports)
    return None if read is None else read[0]


def _whole_files_read(
    planned: PlannedScan,
    options: Mapping[str, Any],
    reports: list[ScanReport] | None,
    option: str = "auger.scan.local_bytes",
    room: int = ARROW_ROOM,
) -> tuple[pa.Table, TaskFacts] | None:
    """The scan's whole files read here, with the facts reported, when they fit the bound
    ``option`` sets (else None); the batches may hold ``room`` times that bound."""
    most = _whole_files_bound(planned, options, option)
    if most is None:
        return None
    batch_rows = max(1, int(planned.spec.options.get("auger.scan.batch_rows", 4096)))
    files = tuple(f.path for f in planned.spec.files)
    return _driver_read(planned, batch_rows, files, reports, most, room)


def _whole_files_bound(
    planned: PlannedScan, options: Mapping[str, Any], option: str = "auger.scan.local_bytes"
) -> int | None:
    """The bound ``option`` sets when the scan's whole files fit it, else None."""
    spec = planned.spec
    most = int(options.get(option, _DEFAULTS[option]) or 0)
    if most <= 0 or not spec.files:
        return None

    total = 0
    for split in spec.files:
        # a size of 0 may mean "not known" (a listing without sizes): Spark reads those
        if split.is_range or split.size <= 0:
            return None
        total += uncompressed_estimate(split.path, split.size)
        if total > most:
            return None
    return most


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
    read = _driver_read(planned, batch_rows, files, reports, most)
    return None if read is None else read[0]


def _driver_read(
    planned: PlannedScan,
    batch_rows: int,
    files: tuple[str, ...],
    reports: list[ScanReport] | None,
    most: int = 0,
    room: int = ARROW_ROOM,
) -> tuple[pa.Table, TaskFacts] | None:
    """:func:`_driver_table`'s table, with the facts it reported (``room``: the batches may
    hold that many times ``most``)."""

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
                        if held > most * room:
                            raise BudgetExceeded(f"{held:,} bytes of batches")
                        batches.append(batch)
            except BudgetExceeded as exc:
                _log.info("a scan read in the server passed its bound (%s): Spark reads it", exc)
                return None
        else:
            batches = list(run_scan(spec, None, batch_rows, target))
    facts = TaskFacts(files, sum(rows_of(spec, b) for b in batches), skipped)
    _report(planned, facts, reports)
    return pa.Table.from_batches(batches, schema=target), facts


def _report(planned: PlannedScan, facts: TaskFacts, reports: list[ScanReport] | None) -> None:
    """Tell the statement (when it wants ``reports``) what the driver-side scan read."""

    report = start_report(None, planned.spec, reports, on_driver=True)
    if report is not None:
        report.add_local(facts)


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
    kept: KeptFrames | None = None,
) -> Any:
    """A DataFrame of the whole scan read here, or None when its files are not small; the
    frame an earlier statement built for the same spec when ``kept`` (the engine's kept
    frames; None: keep none) still has it."""
    if _whole_files_bound(planned, options) is None:
        return None
    key = _kept_key(planned) if kept is not None else None
    if kept is not None and key is not None and (found := kept.get(spark, key)) is not None:
        frame, facts = found
        _report(planned, facts, reports)
        return frame
    read = _whole_files_read(planned, options, reports)
    if read is None:
        return None
    table, facts = read
    frame = _frame(spark, planned, table)
    if kept is not None and key is not None and not facts.skipped:
        # a read that skipped bad records is read again: its warnings come from the read
        kept.put(spark, key, frame, facts, table.nbytes, view=not is_connect(spark), local=True)
    return frame


def _kept_key(planned: PlannedScan) -> str | None:
    """What a kept frame is found by: the spec (files with their sizes and modification times,
    formats and reader options, columns); None when a file's identity is not fully known."""
    spec = planned.spec
    files = []
    for split in spec.files:
        if split.mtime <= 0 or split.size <= 0:
            return None
        files.append(f"{split.path}\0{split.size}\0{split.mtime!r}\0{split.row_groups}")
    # the rest of the spec as its JSON form has it (the files' part of that is slow to build
    # for thousands of them)
    return "\n".join([replace(spec, files=()).to_json(), *files])


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
