"""A lakehouse table (Iceberg, Delta) as a scan's table: the chosen snapshot's data files,
read as their data format, with the table's own schema. SQL and the ``auger`` data source of
plain PySpark reads both plan such a table here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from auger.config import FormatConfig
from auger.formats.lakehouse import read_snapshot
from auger.formats.parquet_columns import COLUMN_MAPPING, ColumnMapping
from auger.scan.plan import ScanTable, discover_table
from auger.storage.schema_file import SchemaFile
from auger.types import TupleSchema

__all__ = ["lakehouse_scan_table"]


def lakehouse_scan_table(
    kind: str,
    location: str,
    table_options: Mapping[str, Any],
    data_format: Callable[[str], FormatConfig | None],
    options: Mapping[str, Any],
    name: str,
    provided: SchemaFile | None = None,
    label: str | None = None,
) -> ScanTable:
    """The table at ``location`` as its metadata describes it.

    ``table_options`` choose the snapshot or version (time travel); ``data_format`` gives the
    configured format of a type (``parquet``), if any. A file lacking a column the table added
    reads NULL there; a column the table dropped is not read; a partition column whose values
    live in the paths (Delta) is a ``key=value`` column of the scan; a table whose files name
    its columns otherwise (renamed Iceberg columns, Delta's column mapping) has its files'
    columns renamed by the Parquet reader.
    """
    snapshot = read_snapshot(kind, location, table_options)
    fmt = data_format(snapshot.data_format) or FormatConfig(
        snapshot.data_format, snapshot.data_format, (snapshot.data_format,), {}
    )
    if snapshot.column_mapping:
        mapping = ColumnMapping(snapshot.column_mapping)
        fmt = replace(fmt, options={**fmt.options, COLUMN_MAPPING: mapping.to_option()})
    partitions = {p.lower() for p in snapshot.path_partitions}
    schema = TupleSchema(c for c in snapshot.schema if c.name.lower() not in partitions)

    def table_schema(*_: Any) -> TupleSchema:
        return schema

    return discover_table(
        snapshot.selection(), fmt, options, table_schema, None, name, location, provided, label
    )
