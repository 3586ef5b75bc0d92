"""``information_schema``: CATALOGS, SCHEMATA, TABLES, VIEWS, COLUMNS, PARTITIONS and FILES as
small Arrow tables.

Spark has no such schema; each table is built on demand from the catalog (see
:mod:`auger.sql.catalog.table_listing`)
with Drill's column names. COLUMNS lists the columns that are known
without reading data: those of views (from their files), of tables with a provided schema
(``.drill.schema``) and of the system tables. As in Drill, every column of these tables is
declared NOT NULL (DESCRIBE and COLUMNS say ``IS_NULLABLE`` ``NO``), and the schema is spelled
``information_schema``; a query may write it in any case. PARTITIONS is empty: auger keeps no
metastore of partitions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa

from auger.errors import UserError
from auger.formats.lakehouse import read_schema, table_kind
from auger.sql.catalog.resolution import IS_SCHEMA_NAME
from auger.sql.catalog.sys_tables import sys_table
from auger.sql.catalog.table_listing import list_tables
from auger.storage import filesystem as fs
from auger.storage.file_facts import directory_facts
from auger.storage.schema_file import read_schema_file, schema_file_path
from auger.types import ColumnMetadata, DataMode, MinorType
from auger.types.arrow import schema_from_arrow

if TYPE_CHECKING:
    from auger.sql.context import StatementContext

__all__ = [
    "INFO_TABLES",
    "calcite_sql_name",
    "data_type_name",
    "info_schema_columns",
    "info_schema_table",
]

CATALOG = "DRILL"
CATALOG_DESCRIPTION = "The internal metadata used by Drill"

#: SCHEMATA's TYPE: the storage plugin type of each system schema, as Drill names them.
_SYSTEM_SCHEMA_TYPES = {"sys": "system-tables", IS_SCHEMA_NAME: "ischema"}

#: Calcite type names (as view files store them) → the names SQL users see in Drill.
_CALCITE_SQL_NAMES = {
    "VARCHAR": "CHARACTER VARYING",
    "CHAR": "CHARACTER",
    "VARBINARY": "BINARY VARYING",
    "BINARY": "BINARY",
    "INTERVAL_DAY": "INTERVAL",
    "INTERVAL_YEAR_MONTH": "INTERVAL",
}


def data_type_name(col: ColumnMetadata) -> str:
    """The DATA_TYPE DESCRIBE and INFORMATION_SCHEMA.COLUMNS print for a column."""
    if col.mode is DataMode.REPEATED or col.type is MinorType.LIST:
        return "ARRAY"
    if col.type is MinorType.MAP:
        return "MAP"
    if col.type is MinorType.DICT:
        return "DICT"
    return str(col.type.sql_name)


def calcite_sql_name(type_name: str) -> str:
    return _CALCITE_SQL_NAMES.get(type_name.upper(), type_name.upper())


def _catalogs(statement: StatementContext) -> pa.Table:
    return pa.table(
        {
            "CATALOG_NAME": pa.array([CATALOG], pa.string()),
            "CATALOG_DESCRIPTION": pa.array([CATALOG_DESCRIPTION], pa.string()),
            "CATALOG_CONNECT": pa.array([""], pa.string()),
        }
    )


def _schemata(statement: StatementContext) -> pa.Table:
    names = statement.catalog.schema_names()
    writable = {w.name for w in statement.catalog.workspaces() if w.writable}
    types = {w.name: w.plugin.type for w in statement.catalog.workspaces()}
    return pa.table(
        {
            "CATALOG_NAME": pa.array([CATALOG] * len(names), pa.string()),
            "SCHEMA_NAME": pa.array(names, pa.string()),
            "SCHEMA_OWNER": pa.array(["<owner>"] * len(names), pa.string()),
            "TYPE": pa.array(
                [types.get(n) or _SYSTEM_SCHEMA_TYPES.get(n, "file") for n in names], pa.string()
            ),
            "IS_MUTABLE": pa.array(["YES" if n in writable else "NO" for n in names], pa.string()),
        }
    )


def _tables(statement: StatementContext) -> pa.Table:

    rows = list_tables(statement)
    return pa.table(
        {
            "TABLE_CATALOG": pa.array([CATALOG] * len(rows), pa.string()),
            "TABLE_SCHEMA": pa.array([r.schema for r in rows], pa.string()),
            "TABLE_NAME": pa.array([r.name for r in rows], pa.string()),
            "TABLE_TYPE": pa.array([r.type for r in rows], pa.string()),
            "TABLE_SOURCE": pa.array(
                ["SYSTEM" if r.type == "SYSTEM_TABLE" else "FILE" for r in rows], pa.string()
            ),
            "LOCATION": pa.array([r.location for r in rows], pa.string()),
            "NUM_ROWS": pa.array([None] * len(rows), pa.int64()),
            "LAST_MODIFIED_TIME": pa.array([None] * len(rows), pa.timestamp("ms")),
        }
    )


def _views(statement: StatementContext) -> pa.Table:

    rows = [r for r in list_tables(statement) if r.type == "VIEW"]
    return pa.table(
        {
            "TABLE_CATALOG": pa.array([CATALOG] * len(rows), pa.string()),
            "TABLE_SCHEMA": pa.array([r.schema for r in rows], pa.string()),
            "TABLE_NAME": pa.array([r.name for r in rows], pa.string()),
            "VIEW_DEFINITION": pa.array([r.view.sql if r.view else None for r in rows]),
        }
    )


_COLUMN_FIELDS: list[tuple[str, pa.DataType]] = [
    ("TABLE_CATALOG", pa.string()),
    ("TABLE_SCHEMA", pa.string()),
    ("TABLE_NAME", pa.string()),
    ("COLUMN_NAME", pa.string()),
    ("ORDINAL_POSITION", pa.int32()),
    ("COLUMN_DEFAULT", pa.string()),
    ("IS_NULLABLE", pa.string()),
    ("DATA_TYPE", pa.string()),
    ("CHARACTER_MAXIMUM_LENGTH", pa.int32()),
    ("CHARACTER_OCTET_LENGTH", pa.int32()),
    ("NUMERIC_PRECISION", pa.int32()),
    ("NUMERIC_PRECISION_RADIX", pa.int32()),
    ("NUMERIC_SCALE", pa.int32()),
    ("DATETIME_PRECISION", pa.int32()),
    ("INTERVAL_TYPE", pa.string()),
    ("INTERVAL_PRECISION", pa.int32()),
    ("COLUMN_SIZE", pa.int32()),
    ("COLUMN_FORMAT", pa.string()),
    ("NUM_NULLS", pa.int64()),
    ("MIN_VAL", pa.string()),
    ("MAX_VAL", pa.string()),
    ("NDV", pa.float64()),
    ("EST_NUM_NON_NULLS", pa.float64()),
    ("IS_NESTED", pa.bool_()),
]

_PARTITION_FIELDS: list[tuple[str, pa.DataType]] = [
    ("TABLE_CATALOG", pa.string()),
    ("TABLE_SCHEMA", pa.string()),
    ("TABLE_NAME", pa.string()),
    ("METADATA_KEY", pa.string()),
    ("METADATA_TYPE", pa.string()),
    ("METADATA_IDENTIFIER", pa.string()),
    ("PARTITION_COLUMN", pa.string()),
    ("PARTITION_VALUE", pa.string()),
    ("LOCATION", pa.string()),
    ("LAST_MODIFIED_TIME", pa.timestamp("ms")),
]


def _partitions(statement: StatementContext) -> pa.Table:
    return pa.schema(_PARTITION_FIELDS).empty_table()


def _columns(statement: StatementContext) -> pa.Table:

    rows: list[dict[str, object]] = []

    def add(schema: str, table: str, pos: int, name: str, dtype: str, nullable: bool) -> None:
        rows.append(
            {
                "TABLE_CATALOG": CATALOG,
                "TABLE_SCHEMA": schema,
                "TABLE_NAME": table,
                "COLUMN_NAME": name,
                "ORDINAL_POSITION": pos,
                "IS_NULLABLE": "YES" if nullable else "NO",
                "DATA_TYPE": dtype,
                "IS_NESTED": False,
            }
        )

    for entry in list_tables(statement):
        if entry.type == "VIEW" and entry.view is not None:
            for pos, f in enumerate(entry.view.fields, 1):
                add(entry.schema, entry.name, pos, f.name, calcite_sql_name(f.type), f.nullable)
        elif entry.type == "TABLE" and entry.location:
            for pos, col in enumerate(_provided_columns(entry.location), 1):
                add(
                    entry.schema,
                    entry.name,
                    pos,
                    col.name,
                    data_type_name(col),
                    col.mode is not DataMode.REQUIRED,
                )
        elif entry.type == "SYSTEM_TABLE":
            system = _system_table_columns(entry.schema, entry.name, statement)
            for pos, (name, dtype, nullable) in enumerate(system, 1):
                add(entry.schema, entry.name, pos, name, dtype, nullable)
    fields = pa.schema(_COLUMN_FIELDS)
    return pa.table({f.name: pa.array([r.get(f.name) for r in rows], f.type) for f in fields})


def _provided_columns(location: str) -> list[ColumnMetadata]:
    """A table directory's columns known without reading a data file: an Iceberg or Delta
    table's from its metadata, else its provided schema's."""

    kind = table_kind(location)
    if kind is not None:
        try:
            return list(read_schema(kind, location))
        except UserError:  # a broken table is still listed; querying it reports the error
            return []
    path = schema_file_path(location)
    try:
        if not fs.isfile(path):
            return []
    except UserError:
        return []
    try:
        return list(read_schema_file(path).schema)
    except UserError:
        return []


def _system_table_columns(
    schema: str, name: str, statement: StatementContext
) -> list[tuple[str, str, bool]]:
    """A system table's columns: name, SQL type name, nullable."""
    if schema == IS_SCHEMA_NAME:
        return info_schema_columns(name, statement)

    arrow_schema = sys_table(name, statement).schema
    return [(c.name, c.type.sql_name, True) for c in schema_from_arrow(arrow_schema)]


def info_schema_columns(name: str, statement: StatementContext) -> list[tuple[str, str, bool]]:
    """An ``information_schema`` table's columns as Drill declares them: all NOT NULL."""
    static = {"COLUMNS": _COLUMN_FIELDS, "FILES": _FILE_FIELDS, "PARTITIONS": _PARTITION_FIELDS}
    key = name.upper()
    if key in static:
        arrow_schema = pa.schema(static[key])
    else:
        arrow_schema = info_schema_table(key, statement).schema
    return [(c.name, c.type.sql_name, False) for c in schema_from_arrow(arrow_schema)]


_FILE_FIELDS: list[tuple[str, pa.DataType]] = [
    ("SCHEMA_NAME", pa.string()),
    ("ROOT_SCHEMA_NAME", pa.string()),
    ("WORKSPACE_NAME", pa.string()),
    ("FILE_NAME", pa.string()),
    ("RELATIVE_PATH", pa.string()),
    ("IS_DIRECTORY", pa.bool_()),
    ("IS_FILE", pa.bool_()),
    ("LENGTH", pa.int64()),
    ("OWNER", pa.string()),
    ("GROUP", pa.string()),
    ("PERMISSION", pa.string()),
    ("ACCESS_TIME", pa.timestamp("ms")),
    ("MODIFICATION_TIME", pa.timestamp("ms")),
]


def _files(statement: StatementContext) -> pa.Table:
    """Entries of every workspace directory (recursively when
    ``storage.list_files_recursively`` is set; SHOW FILES never recurses). A directory that
    cannot be listed lists nothing."""
    recursive = bool(statement.options.get("storage.list_files_recursively"))
    rows: list[dict[str, object]] = []
    for ws in statement.catalog.workspaces():
        try:
            top = ws.resolve("", listing=True)
        except UserError:  # the workspace directory itself is denied
            continue
        # the root workspace is not walked: it would list the whole machine
        descend = recursive and ws.config.location != "/"
        pending = [""]
        while pending:
            rel_dir = pending.pop(0)
            try:
                entries = directory_facts(fs.join(top, rel_dir) if rel_dir else top)
            except (OSError, UserError):
                continue
            for e in entries:
                if not ws.listed(e.path):
                    continue
                rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
                rows.append(
                    {
                        "SCHEMA_NAME": ws.name,
                        "ROOT_SCHEMA_NAME": ws.plugin.name,
                        "WORKSPACE_NAME": ws.config.name,
                        "FILE_NAME": e.name,
                        "RELATIVE_PATH": rel,
                        "IS_DIRECTORY": e.is_directory,
                        "IS_FILE": e.is_file,
                        "LENGTH": e.length,
                        "OWNER": e.owner,
                        "GROUP": e.group,
                        "PERMISSION": e.permission,
                        "ACCESS_TIME": e.access_time,
                        "MODIFICATION_TIME": e.modification_time,
                    }
                )
                if e.is_directory and descend:
                    pending.append(rel)
    fields = pa.schema(_FILE_FIELDS)
    return pa.table({f.name: pa.array([r[f.name] for r in rows], f.type) for f in fields})


INFO_TABLES: dict[str, Callable[[StatementContext], pa.Table]] = {
    "CATALOGS": _catalogs,
    "SCHEMATA": _schemata,
    "TABLES": _tables,
    "VIEWS": _views,
    "COLUMNS": _columns,
    "FILES": _files,
    "PARTITIONS": _partitions,
}


def info_schema_table(name: str, statement: StatementContext) -> pa.Table:
    builder = INFO_TABLES.get(name.upper())
    if builder is None:
        raise UserError.validation(
            f"Object '{name}' not found within '{IS_SCHEMA_NAME}'",
            [f"Known tables: {', '.join(INFO_TABLES)}"],
        )
    return builder(statement)
