"""The ``auger`` Spark Python data source: Drill's scan semantics inside Spark.

Two ways in:

- the planner passes a serialized :class:`~auger.scan.spec.ScanSpec` as option ``spec``, to
  the same source under a name of its own (:data:`PLANNED_SOURCE`, see
  :class:`PlannedScanSource`);
- plain PySpark users write ``spark.read.format("auger").option("format", "csv").load(path)``,
  and the spec is planned here from the path and the options.

``partitions()`` groups files (and pieces of big ones) into tasks of about
``auger.scan.target_split_bytes`` (:mod:`auger.spark.partitions`); ``read()``
runs the scan and yields Arrow batches in the exact Arrow schema Spark validates (the scan
converts to it, see :func:`auger.scan.run.run_scan`).
A ``UserError`` raised on an executor is serialized into the task's error message and restored
on the driver by :func:`auger.spark.errors.unwrap_spark_error`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from auger.errors import UserError
from auger.formats.registry import get_format, install_shipped
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.types.spark import schema_to_spark, spark_arrow_schema

__all__ = [
    "PLANNED_SOURCE",
    "AugerDataSource",
    "AugerReader",
    "FilesPartition",
    "PlannedScanSource",
]

#: The name auger's planner reads its scans through (:class:`PlannedScanSource`)
PLANNED_SOURCE = "auger_planned"


class FilesPartition(InputPartition):  # type: ignore[misc]
    """One Spark task: a group of file splits read one after another."""

    def __init__(self, files: list[FileSplit]) -> None:
        super().__init__(files)
        self.files = files


class AugerDataSource(DataSource):  # type: ignore[misc]
    """``spark.read.format("auger")``: a planned spec (option ``spec``) or a path and options."""

    @classmethod
    def name(cls) -> str:
        return "auger"

    def _spec(self, given: Any = None) -> ScanSpec:
        """The scan spec; ``given`` is a schema the user passed with ``.schema(...)``."""
        cached = getattr(self, "_cached_spec", None)
        if cached is None:
            text = self.options.get("spec")
            if text:
                cached = ScanSpec.from_json(text)
            else:
                # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
                from auger.spark.direct import plan_direct_read

                cached = plan_direct_read(dict(self.options), given)
            self._cached_spec = cached
        return cached

    def schema(self) -> Any:
        try:
            return schema_to_spark(self._spec().schema())
        except UserError as exc:
            raise _encoded(exc) from None

    def reader(self, schema: Any) -> DataSourceReader:
        try:
            spec = self._spec(schema)
            if schema != schema_to_spark(spec.schema()):  # the user's .schema(...) wins
                # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
                from auger.spark.direct import respec_for_schema

                spec = respec_for_schema(spec, schema)
        except UserError as exc:
            raise _encoded(exc) from None
        reader = AugerPushdownReader if _pushdown_wanted(self.options) else AugerReader
        return reader(spec, schema, self.options.get("report"))


def _encoded(exc: UserError) -> RuntimeError:
    """The error Spark carries from a Python worker to the driver, where
    :func:`auger.spark.errors.unwrap_spark_error` restores the ``UserError``. Imported here, on
    failure only: the error translation is large, and a worker that never fails needs none."""
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.spark.errors import worker_error

    return worker_error(exc)


def _pushdown_wanted(options: Any) -> bool:
    """Whether to offer ``pushFilters``: Spark fails every read of a reader that has it while
    ``spark.sql.python.filterPushdown.enabled`` is off, so only where the conf is known to be on:
    the engine's own scans (bootstrap sets it) or when the user says so (option ``pushdown``)."""
    flag = options.get("pushdown")
    if flag is not None:
        return str(flag).strip().lower() in ("true", "1", "yes")
    return bool(options.get("spec"))


class PlannedScanSource(AugerDataSource):
    """The ``auger`` data source under the name the planner reads through
    (:data:`PLANNED_SOURCE`), which the engine registers from Python in every session it uses.

    Spark registers ``auger`` by itself where auger is installed (the ``pyspark_auger``
    module), but a data source Spark registered that way hands its tasks' accumulator updates
    to nobody: the facts each task reports (files and rows read, records skipped with their
    lines) never reached the driver, and a file read by Spark's tasks skipped its bad records
    without a word. Registered from Python, the source's tasks report to the driver's
    accumulator. Under a name of its own, registering it never replaces the ``auger`` Spark
    found, which Spark would warn about in a user's session."""

    @classmethod
    def name(cls) -> str:
        return PLANNED_SOURCE


class AugerReader(DataSourceReader):  # type: ignore[misc]
    """Plans tasks from the spec and runs the scan of each task's splits."""

    def __init__(self, spec: ScanSpec, schema: Any, report: str | None = None) -> None:
        self.spec = spec
        self.spark_schema = schema
        self.predicates: list[Any] = []
        #: where tasks add their rows read and records skipped (:mod:`auger.spark.scan_report`)
        self.report = report

    def __getstate__(self) -> dict[str, Any]:
        # the reader goes to every task pickled: the footers the spec carries are for planning
        # the tasks (``partitions()``, on this instance), not for reading them
        state = dict(self.__dict__)
        if self.spec.footers:
            state["spec"] = replace(self.spec, footers={})
        return state

    def partitions(self) -> list[InputPartition]:
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.spark.partitions import plan_partitions

        try:
            spec = self.spec
            install_shipped(spec.format_type, spec.plugin)
            row_group_filter = None
            if self.predicates:
                # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
                from auger.spark.pushdown import file_may_match

                kept = tuple(f for f in spec.files if file_may_match(spec, f, self.predicates))
                spec = spec.with_files(kept)
                if spec.format_type == "parquet":
                    row_group_filter = self._row_group_filter()
            ranges = bool(getattr(get_format(spec.format_type), "reads_byte_ranges", False))
            groups = plan_partitions(spec, row_group_filter, text_ranges=ranges)
        except UserError as exc:
            raise _encoded(exc) from None
        return [FilesPartition(g) for g in groups] or [FilesPartition([])]

    def _row_group_filter(self) -> Any:
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.spark.pushdown import row_groups_may_match

        table_cols = {
            n.lower() for n, src in self.spec.sources.items() if src == ColumnSource.TABLE
        }
        predicates = [p for p in self.predicates if p[1] in table_cols]
        if not predicates:
            return None

        def keep(path: str, meta: Any) -> list[int]:
            return row_groups_may_match(meta, table_cols, predicates)

        return keep

    def read(self, partition: InputPartition) -> Iterator[Any]:

        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.formats.skips import recording

        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.scan.run import run_scan

        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.spark.scan_report import TaskFacts, add_task_facts, rows_of

        target = spark_arrow_schema(self.spark_schema)
        files = getattr(partition, "files", None) or []
        batch_rows = int(self.spec.options.get("auger.scan.batch_rows", 4096))
        produced = False
        rows = 0
        try:
            install_shipped(self.spec.format_type, self.spec.plugin)
            scan: Callable[..., Iterator[Any]] = run_scan
            if self.spec.cache_build:  # the files' raw-file cache entries are written too
                # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
                from auger.scan.cache_build import building_scan

                scan = building_scan
            with recording() as skipped:
                for batch in scan(self.spec, files, batch_rows, target):
                    produced = True
                    rows += rows_of(self.spec, batch)
                    yield batch
            if self.report:
                paths = tuple(dict.fromkeys(f.path for f in files))
                add_task_facts(self.report, files, TaskFacts(paths, rows, skipped))
        except UserError as exc:
            raise _encoded(exc) from None
        except Exception as exc:  # a conversion auger did not foresee: still a clean error
            err = UserError.system(
                f"Cannot deliver scan batch to Spark: {type(exc).__name__}: {exc}",
                [f"Table: {self.spec.table}"] if self.spec.table else [],
            )
            raise _encoded(err) from None
        if not produced:
            yield pa.RecordBatch.from_arrays([pa.nulls(0, f.type) for f in target], schema=target)


class AugerPushdownReader(AugerReader):
    """The reader with ``pushFilters``: filters skip files and row groups, Spark still applies
    them all (see :mod:`auger.spark.pushdown`)."""

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.spark.pushdown import to_predicates

        self.predicates = to_predicates(filters)
        yield from filters
