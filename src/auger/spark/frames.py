"""One planned file scan → one Spark DataFrame, by the fastest path with Drill's semantics.

The ``auger`` data source (the scan framework on executors) is the path for everything and the
semantic reference; other paths are taken only where they give exactly the same rows and types
(each is tested against the data source as its oracle).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from auger.scan.spec import ScanSpec
from auger.spark.scan_report import start_report
from auger.storage.parquet_footers import kept_footer_bytes

if TYPE_CHECKING:
    from auger.scan.plan import PlannedScan

__all__ = ["datasource_frame", "scan_frame", "with_footers"]


def scan_frame(
    spark: Any, planned: PlannedScan, options: Mapping[str, Any], small_here: bool = False
) -> Any:
    """The DataFrame delivering ``planned.schema`` for the planned scan.

    Args:
        spark: the session.
        planned: the scan.
        options: the session's options.
        small_here: whether a scan of a few small files may be read now, on the driver (for a
            query about to run; not for one only explained or stored as a plan).
    """
    from auger.spark.local_scan import local_limit_frame

    frame = local_limit_frame(spark, planned, options)
    if frame is not None:
        return frame
    from auger.spark.native_parquet import native_parquet_frame

    # after the driver-side small LIMIT, which needs no Spark job at all (faster still)
    if (native := native_parquet_frame(spark, planned, options)) is not None:
        return native
    from auger.spark.local_scan import small_input_frame

    # a few small files: read on the driver (no data source planning, no Python worker, and
    # quicker than any Spark job over a cache entry of them)
    if small_here and (small := small_input_frame(spark, planned, options)) is not None:
        return small
    from auger.spark.cached_scan import cached_frame

    # text and JSON files kept in the raw-file cache: Spark's Parquet reader over the entries
    if (cached := cached_frame(spark, planned, options)) is not None:
        return cached
    return datasource_frame(spark, planned)


def datasource_frame(spark: Any, planned: PlannedScan) -> Any:
    """The scan framework inside Spark: the ``auger`` Python data source with the spec (and,
    when the statement is watching, where its tasks report what they read)."""
    reader = spark.read.format("auger").schema(planned.schema.to_spark())
    report = start_report(spark, planned.spec)
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
