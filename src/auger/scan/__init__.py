"""The scan framework: projection, schema tracking, implicit/partition and missing columns.

Everything here is pure Python + pyarrow and picklable: it runs on Spark executors. Layering:
``scan`` imports ``projection``, ``types`` and ``errors`` (and ``resultset`` for the reader
lifecycle), never ``sql``, ``server`` or pyspark.

The scan operator also gives format plugins written as readers their derived
``discover_schema`` (:func:`auger.formats.base.derive_discovery_with`): ``formats`` sits below
``scan`` and cannot import the reader framework itself.
"""

from auger.formats.base import derive_discovery_with
from auger.scan.conflicts import ErrorContext, ScanStateError, SchemaMismatchError
from auger.scan.filter import PROJECT_ALL, PROJECT_NONE, ProjectionFilter, ProjResult
from auger.scan.implicit import (
    FileDescrip,
    ImplicitColumns,
    ImplicitOptions,
    implicit_values,
    max_partition_depth,
    partition_keys,
    resolve_implicit_columns,
)
from auger.scan.lifecycle import (
    FormatReader,
    ReaderLifecycle,
    ScanLifecycle,
    SchemaNegotiator,
    loader_projection,
)
from auger.scan.missing import missing_arrays, missing_batch, resolve_missing_types
from auger.scan.operator import ReaderFormatPlugin, ScanOperator, discover_through_reader
from auger.scan.output import assemble
from auger.scan.run import run_scan
from auger.scan.schema import ScanColumn, ScanTuple
from auger.scan.tracker import ProjectionType, ScanSchemaTracker

__all__ = [
    "PROJECT_ALL",
    "PROJECT_NONE",
    "ErrorContext",
    "FileDescrip",
    "FormatReader",
    "ImplicitColumns",
    "ImplicitOptions",
    "ProjResult",
    "ProjectionFilter",
    "ProjectionType",
    "ReaderFormatPlugin",
    "ReaderLifecycle",
    "ScanColumn",
    "ScanLifecycle",
    "ScanOperator",
    "ScanSchemaTracker",
    "ScanStateError",
    "ScanTuple",
    "SchemaMismatchError",
    "SchemaNegotiator",
    "assemble",
    "implicit_values",
    "loader_projection",
    "max_partition_depth",
    "missing_arrays",
    "missing_batch",
    "partition_keys",
    "resolve_implicit_columns",
    "resolve_missing_types",
    "run_scan",
]

derive_discovery_with(discover_through_reader)
