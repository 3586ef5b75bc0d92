"""The scan framework: projection, schema tracking, implicit/partition and missing columns.

Everything here is pure Python + pyarrow and picklable: it runs on Spark executors. Layering:
``scan`` imports ``projection``, ``types`` and ``errors`` (and ``resultset`` for the reader
lifecycle), never ``sql``, ``server`` or pyspark.

``ScanOperator`` and ``ReaderFormatPlugin`` live in ``auger.scan.operator`` and ``run_scan`` (a
planned scan through the operator) in ``auger.scan.run``; both build on ``auger.formats.base``,
and ``auger.formats.base`` imports ``auger.scan.spec``. Importing them here eagerly would make
``import auger.formats`` re-enter this package half-built, so those three names are resolved on
first use (PEP 562).
"""

from typing import Any

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
from auger.scan.output import assemble
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

_LAZY = {"ScanOperator": "operator", "ReaderFormatPlugin": "operator", "run_scan": "run"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"auger.scan.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'auger.scan' has no attribute {name!r}")
