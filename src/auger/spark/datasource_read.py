"""A planned scan as a read of the ``auger`` data source: the path every other path of
:mod:`auger.spark.frames` falls back to, and the one the raw-file cache's misses take
(:mod:`auger.spark.cached_scan`), which is why it has a module of its own."""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from auger.scan.spec import ScanSpec
from auger.spark.datasource import PLANNED_SOURCE
from auger.spark.scan_report import ScanReport, start_report
from auger.storage.parquet_footers import kept_footer_bytes
from auger.types.spark import schema_to_spark

if TYPE_CHECKING:
    from auger.scan.plan import PlannedScan

__all__ = ["SHIPPED_FOOTER_BYTES", "datasource_frame", "with_footers"]


def datasource_frame(
    spark: Any, planned: PlannedScan, reports: list[ScanReport] | None = None
) -> Any:
    """The scan framework inside Spark: the ``auger`` Python data source with the spec (and,
    when the statement wants ``reports``, where its tasks report what they read)."""
    reader = spark.read.format(PLANNED_SOURCE).schema(schema_to_spark(planned.schema))
    report = start_report(spark, planned.spec, reports)
    if report is not None and report.token is not None:
        reader = reader.option("report", report.token)
    return reader.option("spec", with_footers(planned.spec).to_json()).load()


#: The most bytes of serialized footers a scan takes along to Spark's planning of its tasks
#: (the rest are read there again, as without any).
SHIPPED_FOOTER_BYTES = 8 * 1024 * 1024


def with_footers(spec: ScanSpec) -> ScanSpec:
    """A Parquet scan's spec carrying the footers planning read (as many as fit
    :data:`SHIPPED_FOOTER_BYTES`): Spark's planning of its tasks, in a process of its own,
    then reads none of them again."""
    if spec.format_type != "parquet" or spec.footers:
        return spec
    shipped: dict[str, str] = {}
    total = 0
    for split in spec.files:
        if split.is_range or split.row_groups is not None:
            continue
        raw = kept_footer_bytes(split.path, split.mtime, split.file_size)
        if raw is None:
            continue
        text = base64.b64encode(raw).decode("ascii")
        total += len(text)
        if total > SHIPPED_FOOTER_BYTES:
            break
        shipped[split.path] = text
    return replace(spec, footers=shipped) if shipped else spec
