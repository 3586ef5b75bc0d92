"""The scan framework: projection, schema tracking, implicit/partition and missing columns.

Everything here is pure Python + pyarrow and picklable: it runs on Spark executors. Layering:
``scan`` imports ``projection``, ``types`` and ``errors`` (and ``resultset`` for the reader
lifecycle), never ``sql``, ``server`` or pyspark.
"""

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
from auger.scan.missing import missing_arrays, missing_batch, resolve_missing_types
from auger.scan.output import assemble
from auger.scan.schema import ScanColumn, ScanTuple
from auger.scan.tracker import ProjectionType, ScanSchemaTracker

__all__ = [
    "PROJECT_ALL",
    "PROJECT_NONE",
    "ErrorContext",
    "FileDescrip",
    "ImplicitColumns",
    "ImplicitOptions",
    "ProjResult",
    "ProjectionFilter",
    "ProjectionType",
    "ScanColumn",
    "ScanSchemaTracker",
    "ScanStateError",
    "ScanTuple",
    "SchemaMismatchError",
    "assemble",
    "implicit_values",
    "max_partition_depth",
    "missing_arrays",
    "missing_batch",
    "partition_keys",
    "resolve_implicit_columns",
    "resolve_missing_types",
]
