"""A lakehouse table (Iceberg, Delta) as a scan's table: the chosen snapshot's data files,
read as their data format, with the table's own schema. SQL and the ``auger`` data source of
plain PySpark reads both plan such a table here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from auger.config import FormatConfig
from auger.formats.lakehouse import read_snapshot
from auger.formats.lakehouse.data_files import DATA_FILE_FORMATS
from auger.formats.parquet_columns import (
    COLUMN_MAPPING,
    NAME_MAPPING,
    PARTITION_VALUES,
    ColumnMapping,
)
from auger.formats.parquet_deletes import ROW_DELETES
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
    reads NULL there; a column the table dropped is not read. The Parquet reader adds the
    partition values the log keeps (Delta) to each file's rows, typed as the table types them,
    renames the columns of files that name them otherwise (renamed Iceberg columns, Delta's
    column mapping), and leaves out the rows a table deleted without rewriting the file (Iceberg's
    position and equality deletes, Delta's deletion vectors). An Iceberg table with Avro or ORC
    data files is read as the table format itself, which reads each file by its format, by the
    same rules, under the Parquet format's options.
    """
    snapshot = read_snapshot(kind, location, table_options)
    fmt = data_format(snapshot.data_format) or FormatConfig(
        snapshot.data_format, snapshot.data_format, (snapshot.data_format,), {}
    )
    carried: dict[str, Any] = {}
    if snapshot.column_mapping:
        carried[COLUMN_MAPPING] = ColumnMapping(snapshot.column_mapping).to_option()
        if snapshot.name_mapping:
            carried[NAME_MAPPING] = dict(snapshot.name_mapping)
    if snapshot.partition_values is not None:
        carried[PARTITION_VALUES] = snapshot.partition_values.to_option()
    if snapshot.row_deletes is not None:
        carried[ROW_DELETES] = snapshot.row_deletes.to_option()
    if snapshot.file_formats:
        # data files of several formats, one scan: the table's own format reads each file
        fmt = replace(fmt, name=snapshot.kind, type=snapshot.kind, extensions=())
        carried[DATA_FILE_FORMATS] = dict(snapshot.file_formats)
    if carried:
        fmt = replace(fmt, options={**fmt.options, **carried})
    schema = snapshot.schema

    def table_schema(*_: Any) -> TupleSchema:
        return schema

    return discover_table(
        snapshot.selection(), fmt, options, table_schema, None, name, location, provided, label
    )
