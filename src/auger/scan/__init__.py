"""The scan framework: projection, schema tracking, implicit/partition and missing columns.

Everything here is pure Python + pyarrow and picklable: it runs on Spark executors. Layering:
``scan`` imports ``projection``, ``types`` and ``errors`` (and ``resultset`` for the reader
lifecycle), never ``sql``, ``server`` or pyspark.

The names below are loaded from their modules on first use: every import of an
``auger.scan.<module>`` (a Spark worker unpickling a scan spec, say) runs this file first, and a
worker should pay only for the modules its work needs.

The scan operator also gives format plugins written as readers their derived
``discover_schema`` (:func:`auger.formats.base.derive_discovery_with`): ``formats`` sits below
``scan`` and cannot import the reader framework itself. The derivation is installed as soon as
any part of ``auger.scan`` is imported (a plugin's ``FormatReader`` comes from here), and loads
the operator only when a schema is discovered.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from auger.formats.base import derive_discovery_with

if TYPE_CHECKING:
    from auger.config import FormatConfig
    from auger.formats.base import FormatPlugin
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
    from auger.scan.operator import ReaderFormatPlugin, ScanOperator
    from auger.scan.output import assemble
    from auger.scan.run import run_scan
    from auger.scan.schema import ScanColumn, ScanTuple
    from auger.scan.tracker import ProjectionType, ScanSchemaTracker
    from auger.types import TupleSchema

#: Each public name and the module (under ``auger.scan``) that defines it.
_HOMES: dict[str, str] = {
    "ErrorContext": "conflicts",
    "ScanStateError": "conflicts",
    "SchemaMismatchError": "conflicts",
    "PROJECT_ALL": "filter",
    "PROJECT_NONE": "filter",
    "ProjectionFilter": "filter",
    "ProjResult": "filter",
    "FileDescrip": "implicit",
    "ImplicitColumns": "implicit",
    "ImplicitOptions": "implicit",
    "implicit_values": "implicit",
    "max_partition_depth": "implicit",
    "partition_keys": "implicit",
    "resolve_implicit_columns": "implicit",
    "FormatReader": "lifecycle",
    "ReaderLifecycle": "lifecycle",
    "ScanLifecycle": "lifecycle",
    "SchemaNegotiator": "lifecycle",
    "loader_projection": "lifecycle",
    "missing_arrays": "missing",
    "missing_batch": "missing",
    "resolve_missing_types": "missing",
    "ReaderFormatPlugin": "operator",
    "ScanOperator": "operator",
    "assemble": "output",
    "run_scan": "run",
    "ScanColumn": "schema",
    "ScanTuple": "schema",
    "ProjectionType": "tracker",
    "ScanSchemaTracker": "tracker",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'auger.scan' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"auger.scan.{home}"), name)
    globals()[name] = value
    return value


def discover_through_reader(
    plugin: FormatPlugin, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
) -> TupleSchema:
    """A reader plugin's table schema, from its readers (see
    :func:`auger.scan.operator.discover_through_reader`)."""
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.scan.operator import discover_through_reader as discover

    return discover(plugin, files, config, options)


derive_discovery_with(discover_through_reader)

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
