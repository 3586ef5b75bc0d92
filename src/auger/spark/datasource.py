"""The ``auger`` Spark Python data source: Drill's scan semantics inside Spark.

Two ways in:

- the planner passes a serialized :class:`~auger.scan.spec.ScanSpec` as option ``spec``;
- plain PySpark users write ``spark.read.format("auger").option("format", "csv").load(path)``,
  and the spec is planned here from the path and the options.

``partitions()`` groups files into tasks of about ``auger.scan.target_split_bytes``; ``read()``
runs the scan and yields Arrow batches conformed to the exact Arrow schema Spark validates.
A ``UserError`` raised on an executor is serialized into the task's error message and restored
on the driver by :func:`auger.spark.errors.unwrap_spark_error`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from auger.scan.spec import FileSplit, ScanSpec

__all__ = ["AugerDataSource", "FilesPartition"]


class FilesPartition(InputPartition):  # type: ignore[misc]
    """One Spark task: a group of file splits."""

    def __init__(self, files: list[FileSplit]) -> None:
        super().__init__(files)
        self.files = files


class AugerDataSource(DataSource):  # type: ignore[misc]
    @classmethod
    def name(cls) -> str:
        return "auger"

    def _spec(self) -> ScanSpec:
        cached = getattr(self, "_cached_spec", None)
        if cached is None:
            text = self.options.get("spec")
            if text:
                cached = ScanSpec.from_json(text)
            else:
                from auger.spark.direct import plan_direct_read

                cached = plan_direct_read(dict(self.options))
            self._cached_spec = cached
        return cached

    def schema(self) -> Any:
        from auger.errors import UserError
        from auger.spark.errors import encode_user_error

        try:
            return self._spec().schema().to_spark()
        except UserError as exc:
            raise RuntimeError(encode_user_error(exc)) from None

    def reader(self, schema: Any) -> DataSourceReader:
        return AugerReader(self._spec(), schema)


def _group_files(
    files: tuple[FileSplit, ...], target_bytes: int, max_tasks: int
) -> list[list[FileSplit]]:
    """Pack files into at most ``max_tasks`` groups of about ``target_bytes`` (order kept)."""
    if not files:
        return []
    total = sum(max(f.size, 1) for f in files)
    per_task = max(target_bytes, -(-total // max(max_tasks, 1)))
    groups: list[list[FileSplit]] = [[]]
    size = 0
    for f in files:
        if groups[-1] and size + f.size > per_task:
            groups.append([])
            size = 0
        groups[-1].append(f)
        size += f.size
    return groups


class AugerReader(DataSourceReader):  # type: ignore[misc]
    def __init__(self, spec: ScanSpec, schema: Any) -> None:
        self.spec = spec
        self.spark_schema = schema

    def partitions(self) -> list[InputPartition]:
        target = int(self.spec.options.get("auger.scan.target_split_bytes", 128 * 1024 * 1024))
        max_tasks = int(self.spec.options.get("auger.scan.max_tasks", 64))
        if self.spec.limit is not None:
            # LIMIT push-down: one task reads files in order and stops early.
            return [FilesPartition(list(self.spec.files))]
        groups = _group_files(self.spec.files, target, max_tasks)
        return [FilesPartition(g) for g in groups] or [FilesPartition([])]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        import pyarrow as pa

        from auger.errors import UserError
        from auger.scan.simple import run_scan
        from auger.spark.errors import encode_user_error
        from auger.types.spark import spark_arrow_schema

        target = spark_arrow_schema(self.spark_schema)
        files = getattr(partition, "files", None) or []
        batch_rows = int(self.spec.options.get("auger.scan.batch_rows", 4096))
        produced = False
        try:
            for batch in run_scan(self.spec, files, batch_rows):
                produced = True
                yield conform_to_spark(batch, target)
        except UserError as exc:
            raise RuntimeError(encode_user_error(exc)) from None
        if not produced:
            yield pa.RecordBatch.from_arrays([pa.array([], f.type) for f in target], schema=target)


def conform_to_spark(batch: Any, target: Any) -> Any:
    """Cast a scan batch to Spark's Arrow schema (list field names, TIME as text, nullability)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if batch.schema.equals(target):
        return batch
    arrays = []
    for arr, field in zip(batch.columns, target, strict=True):
        if not arr.type.equals(field.type):
            arr = _cast(arr, field.type, pa, pc)
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def _cast(arr: Any, to: Any, pa: Any, pc: Any) -> Any:
    if pa.types.is_time(arr.type) and pa.types.is_string(to):
        return pc.cast(arr, pa.string())
    if pa.types.is_interval(arr.type) and pa.types.is_string(to):
        values = [None if v is None else _interval_text(v) for v in arr.to_pylist()]
        return pa.array(values, pa.string())
    return arr.cast(to)


def _interval_text(v: Any) -> str:
    months, days, nanos = v.months, v.days, v.nanoseconds
    return f"P{months // 12}Y{months % 12}M{days}DT{nanos / 1e9:g}S"
