"""One planned file scan → one Spark DataFrame, by the fastest path with Drill's semantics.

The ``auger`` data source (the scan framework on executors) is the path for everything and the
semantic reference; other paths are taken only where they give exactly the same rows and types
(each is tested against the data source as its oracle).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from auger.spark.cached_scan import cached_frame
from auger.spark.datasource_read import datasource_frame
from auger.spark.local_scan import local_limit_frame, small_input_frame
from auger.spark.native_parquet import native_parquet_frame

if TYPE_CHECKING:
    from auger.scan.plan import PlannedScan
    from auger.spark.kept_frames import KeptFrames
    from auger.spark.scan_report import ScanReport

__all__ = ["scan_frame"]


def scan_frame(
    spark: Any,
    planned: PlannedScan,
    options: Mapping[str, Any],
    small_here: bool = False,
    reports: list[ScanReport] | None = None,
    kept: KeptFrames | None = None,
    typed: dict[tuple[str, str], str] | None = None,
    note: Callable[[str], None] | None = None,
) -> Any:
    """The DataFrame delivering ``planned.schema`` for the planned scan.

    Args:
        spark: the session.
        planned: the scan.
        options: the session's options.
        small_here: whether the query runs now (not one only explained or stored as a plan):
            a scan of a few small files may then be read on the driver, and the raw-file
            cache's entries of the files it parses are built after the answer.
        reports: the statement's scan reports, where this scan adds its own (None: nobody
            will read it).
        kept: the engine's kept frames of small whole-file reads and of scans over raw-file
            cache entries (None: keep none).
        typed: when given, a scan over raw-file cache entries may also deliver casts of its
            string columns to numbers read from the entries' typed copies, which this then
            names (see :func:`auger.spark.cached_scan.cached_frame`).
        note: hears what the statement's user should know of the scan's path (a raw-file
            cache that is on and cannot be used).
    """

    frame = local_limit_frame(spark, planned, options, reports)
    if frame is not None:
        return frame

    # after the driver-side small LIMIT, which needs no Spark job at all (faster still)
    if (native := native_parquet_frame(spark, planned, options)) is not None:
        return native

    # a few small files: read on the driver (no data source planning, no Python worker, and
    # quicker than any Spark job over a cache entry of them)
    if (
        small_here
        and (small := small_input_frame(spark, planned, options, reports, kept)) is not None
    ):
        return small

    # text and JSON files kept in the raw-file cache: Spark's Parquet reader over the entries
    cached = cached_frame(
        spark, planned, options, reports, typed, note, build=small_here, kept=kept
    )
    if cached is not None:
        return cached
    return datasource_frame(spark, planned, reports)
