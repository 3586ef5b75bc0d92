"""``SHOW SCHEMAS|TABLES|FILES``, ``DESCRIBE``, ``REFRESH TABLE METADATA`` and ``EXPLAIN PLAN``.

Each answers a small local table with Drill's column names.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from auger.errors import ErrorKind, UserError
from auger.formats.parquet_metadata import refresh_metadata as refresh_parquet_metadata
from auger.sql.catalog.information_schema import data_type_name, info_schema_columns
from auger.sql.catalog.resolution import (
    IS_SCHEMA_NAME,
    FileTable,
    SystemTable,
    ViewTable,
    display_schema,
)
from auger.sql.catalog.table_listing import list_tables
from auger.sql.frontend.command_grammar import ShowSchemas
from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.statement_grammar import (
    Describe,
    DescribeSchemaOf,
    Explain,
    RefreshMetadata,
    ShowFiles,
    ShowTables,
)
from auger.sql.frontend.token_cursor import split_schema_path
from auger.sql.planning import explain as drill_plan
from auger.sql.planning.planner import plan_select
from auger.sql.planning.tables import discover_file_table
from auger.sql.result import QueryResult, ok_result
from auger.storage import drill_json
from auger.storage import filesystem as fs
from auger.storage.file_facts import directory_facts
from auger.storage.selection import is_hidden, select_files
from auger.storage.workspace import Workspace
from auger.types import DataMode
from auger.types.spark import spark_to_column

if TYPE_CHECKING:
    from auger.sql.context import StatementContext

__all__ = [
    "describe_schema_of",
    "describe_table",
    "explain",
    "refresh_metadata",
    "show_files",
    "show_schemas",
    "show_tables",
]

NO_DEFAULT_SCHEMA = "No default schema selected. Select a schema using 'USE schema' command"


def _like(pattern: str, value: str) -> bool:
    """SQL LIKE (``%``, ``_``), case-insensitive as Drill's SHOW TABLES is."""
    glob = "".join(
        "*" if ch == "%" else "?" if ch == "_" else f"[{ch}]" if ch in "[]*?" else ch
        for ch in pattern
    )
    return fnmatch.fnmatchcase(value.lower(), glob.lower())


def _filtered(select: str, where: str, order: str, statement: StatementContext) -> QueryResult:
    """A SHOW statement's ``WHERE`` as Drill runs it: a query of ``information_schema``."""
    tree = parse_statement(f"{select} AND ({where}) ORDER BY {order}")
    return QueryResult(dataframe=plan_select(tree, statement), statement="SHOW")


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def show_schemas(c: ShowSchemas, statement: StatementContext) -> QueryResult:
    """``SHOW SCHEMAS|DATABASES [LIKE 'pattern' | WHERE condition]``."""
    if c.where is not None:
        select = f"SELECT SCHEMA_NAME FROM {IS_SCHEMA_NAME}.SCHEMATA WHERE TRUE"
        return _filtered(select, c.where, "SCHEMA_NAME", statement)
    names = statement.catalog.schema_names()
    if c.like is not None:
        names = [n for n in names if _like(c.like, n)]
    return QueryResult(
        table=pa.table({"SCHEMA_NAME": pa.array(names, pa.string())}), statement="SHOW"
    )


def show_tables(c: ShowTables, statement: StatementContext) -> QueryResult:
    if c.schema is None:
        if not statement.default_schema:
            raise UserError.validation(NO_DEFAULT_SCHEMA)
        schema = statement.default_schema
    else:
        name = ".".join(split_schema_path(list(c.schema)))
        try:
            found = statement.catalog.resolve_schema(name)
        except UserError:
            raise UserError.validation(f"Invalid schema name [{name}]") from None
        schema = found if isinstance(found, str) else found.name
    if c.where is not None:
        select = (
            f"SELECT TABLE_SCHEMA, TABLE_NAME FROM {IS_SCHEMA_NAME}.`TABLES` "
            f"WHERE TABLE_SCHEMA = {_sql_string(schema)}"
        )
        return _filtered(select, c.where, "TABLE_NAME", statement)
    rows = [t for t in list_tables(statement, schema) if c.like is None or _like(c.like, t.name)]
    rows.sort(key=lambda t: t.name)
    return QueryResult(
        table=pa.table(
            {
                "TABLE_SCHEMA": pa.array([t.schema for t in rows], pa.string()),
                "TABLE_NAME": pa.array([t.name for t in rows], pa.string()),
            }
        ),
        statement="SHOW",
    )


def _files_target(c: ShowFiles, statement: StatementContext) -> tuple[Workspace, str]:
    """The workspace and directory a SHOW FILES lists."""
    if c.target is None:
        if not statement.default_schema:
            raise UserError.validation(NO_DEFAULT_SCHEMA)
        found = statement.catalog.resolve_schema(statement.default_schema, from_root=True)
        if isinstance(found, str):
            raise _not_workspace(found)
        return found, found.resolve("", listing=True)
    parts = list(c.target)
    written = ".".join(parts)
    # the longest prefix naming a schema; what follows is a directory inside it
    for cut in range(len(parts), 0, -1):
        schema_parts = split_schema_path(parts[:cut])
        try:
            found = statement.catalog.resolve_schema(".".join(schema_parts))
        except UserError:
            continue
        if isinstance(found, str):
            raise _not_workspace(found)
        rest = "/".join(parts[cut:])
        path = found.resolve(rest, listing=True)
        if not fs.isdir(path):
            break
        return found, path
    if statement.default_schema:  # a directory under the default workspace
        found = statement.catalog.resolve_schema(statement.default_schema, from_root=True)
        if not isinstance(found, str):
            path = found.resolve("/".join(parts), listing=True)
            if fs.isdir(path):
                return found, path
    hint = statement.catalog.schema_hint(written)
    raise UserError.validation(f"Invalid FROM/IN clause [{written}]" + (f".{hint}" if hint else ""))


def _not_workspace(name: str) -> UserError:
    return UserError.validation(
        f"SHOW FILES is supported in workspace type schema only. Schema [{name}] is not a "
        "workspace schema."
    )


def show_files(c: ShowFiles, statement: StatementContext) -> QueryResult:
    ws, directory = _files_target(c, statement)
    entries = [
        e
        for e in directory_facts(directory)
        if not (is_hidden(e.name) and not e.name.endswith(".drill")) and ws.listed(e.path)
    ]
    columns = {
        "name": (pa.string(), [e.name for e in entries]),
        "isDirectory": (pa.bool_(), [e.is_directory for e in entries]),
        "isFile": (pa.bool_(), [e.is_file for e in entries]),
        "length": (pa.int64(), [e.length for e in entries]),
        "owner": (pa.string(), [e.owner for e in entries]),
        "group": (pa.string(), [e.group for e in entries]),
        "permissions": (pa.string(), [e.permission for e in entries]),
        "accessTime": (pa.timestamp("ms"), [e.access_time for e in entries]),
        "modificationTime": (pa.timestamp("ms"), [e.modification_time for e in entries]),
    }
    table = pa.table({name: pa.array(values, kind) for name, (kind, values) in columns.items()})
    # where the workspace is on disk is otherwise found only in its config: say it
    where = f"Files of {display_schema(ws.name)} in {directory}"
    return QueryResult(table=table, statement="SHOW", warnings=[where])


def describe_table(c: Describe, statement: StatementContext) -> QueryResult:
    parts = list(c.table)
    is_temporary = statement.catalog.is_temporary_table(parts)
    if len(parts) == 1 and not statement.default_schema and not is_temporary:
        raise UserError.validation("No schema selected.")
    table = exp.Table(this=exp.to_identifier(parts[-1], quoted=True))
    schema_parts = parts[:-1]
    if schema_parts:
        table.set("db", exp.to_identifier(schema_parts[-1], quoted=True))
        if len(schema_parts) > 1:
            table.set("catalog", exp.to_identifier(".".join(schema_parts[:-1]), quoted=True))
    try:
        # the schema alone: a column whose files disagree is listed, not read (its first type)
        df = plan_select(exp.select("*").from_(table), statement, schema_only=True)
    except UserError as exc:
        if exc.kind is ErrorKind.VALIDATION and "not found" in exc.message:
            where = ".".join(schema_parts) or str(statement.default_schema)
            raise UserError.validation(f"Unknown table [{parts[-1]}] in schema [{where}]") from None
        raise
    known = _known_modes(parts, statement)
    cols = []
    for f in df.schema.fields:
        col = spark_to_column(f.name, f.dataType, f.nullable)
        if col.mode is not DataMode.REPEATED:
            own = DataMode.OPTIONAL if f.nullable else DataMode.REQUIRED  # a map's too
            col = col.with_mode(known.get(f.name.lower(), own))
        cols.append(col)
    if c.column is not None and c.pattern:
        cols = [col for col in cols if _like(c.column, col.name)]
    elif c.column is not None:
        cols = [col for col in cols if col.name.lower() == c.column.lower()]
    return QueryResult(
        table=pa.table(
            {
                "COLUMN_NAME": pa.array([col.name for col in cols], pa.string()),
                "DATA_TYPE": pa.array([data_type_name(col) for col in cols], pa.string()),
                "IS_NULLABLE": pa.array(
                    ["NO" if col.mode is DataMode.REQUIRED else "YES" for col in cols],
                    pa.string(),
                ),
            }
        ),
        statement="DESCRIBE",
    )


def _known_modes(parts: list[str], statement: StatementContext) -> dict[str, DataMode]:
    """Lower column names and their modes where the table knows them better than Spark's
    schema: the columns of an ``information_schema`` table, and a file table's discovered (or
    provided) columns, maps included (Spark calls every struct NOT NULL; a map's mode is the
    data's: a nullable Avro record or Parquet group is nullable). Other columns (``dirN``,
    views) take Spark's nullability."""
    try:
        ref = statement.catalog.resolve_table(parts)
    except UserError:
        return {}
    if isinstance(ref, SystemTable) and ref.schema == IS_SCHEMA_NAME:
        columns = info_schema_columns(ref.name, statement)
        return {
            name.lower(): DataMode.OPTIONAL if nullable else DataMode.REQUIRED
            for name, _, nullable in columns
        }
    if isinstance(ref, FileTable):
        schema = discover_file_table(ref, statement.settings).schema
        return {col.name.lower(): col.mode for col in schema if col.mode is not DataMode.REPEATED}
    return {}


def refresh_metadata(c: RefreshMetadata, statement: StatementContext) -> QueryResult:
    """Write Drill's Parquet metadata cache into a directory of Parquet files
    (:mod:`auger.formats.parquet_metadata`), answering as Drill does: ``ok`` false and Drill's
    words for a table that has no such cache."""
    name = c.table[-1]  # Drill names the table without its schema

    def answer(ok: bool, summary: str) -> QueryResult:
        return ok_result(ok, summary, "REFRESH")

    not_supported = (
        f"Table {name} does not support metadata refresh. Support is currently limited to "
        "directory-based Parquet tables."
    )
    schema_parts = split_schema_path(list(c.table[:-1]))
    if schema_parts:
        try:
            statement.catalog.resolve_schema(".".join(schema_parts))
        except UserError:
            return answer(
                False, f"Storage plugin or workspace does not exist [{'.'.join(schema_parts)}]"
            )
    if "*" in name or "?" in name:
        return answer(False, f"Glob path {name} not supported for metadata refresh")
    try:
        ref = statement.catalog.resolve_table(list(c.table))
    except UserError:
        return answer(False, f"Table {name} does not exist.")
    if isinstance(ref, ViewTable) or not isinstance(ref, FileTable):
        return answer(False, not_supported)
    if not fs.exists(ref.path):
        return answer(False, f"Table {name} does not exist.")
    if not fs.isdir(ref.path):
        return answer(False, not_supported)
    try:
        selection = select_files(ref.path)
    except UserError as exc:
        return answer(False, f"Error: {exc.message}")
    if not selection.files:
        return answer(False, f"Table {name} is empty and doesn't contain any parquet files.")
    known = (f.path for f in selection.files if ref.workspace.format_for(f.path))
    fmt = ref.format_override or ref.workspace.format_for(next(known, selection.files[0].path))
    if fmt is None or fmt.type != "parquet":
        return answer(False, not_supported)
    try:
        refresh_parquet_metadata(ref.path, c.columns)
    except UserError as exc:
        return answer(False, f"Error: {exc.message}")
    return answer(True, f"Successfully updated metadata for table {name}.")


def explain(c: Explain, statement: StatementContext) -> QueryResult:
    """The query's plan in Drill's layout and its JSON (see :mod:`auger.sql.planning.explain`)."""
    tree = parse_statement(c.query)
    if not isinstance(tree, exp.Query):
        raise UserError.validation("EXPLAIN PLAN FOR needs a query")
    recording = statement.recording_scans()
    df = plan_select(tree, recording)
    scans = recording.recordings.scans or []
    return drill_plan.explain_result(df, scans, c.with_implementation)


def describe_schema_of(c: DescribeSchemaOf, statement: StatementContext) -> QueryResult:
    """A schema's name and its configuration as JSON (Drill's ``schema``, ``properties``)."""
    name = ".".join(split_schema_path(list(c.schema)))
    try:
        found = statement.catalog.resolve_schema(name)
    except UserError:
        raise UserError.validation(f"Invalid schema name [{name}]") from None
    if isinstance(found, str):
        full = found
        props: dict[str, Any] = {"type": "system"}
    else:
        full = found.name
        plugin = found.plugin
        props = {
            "type": plugin.type,
            "enabled": plugin.enabled,
            "formats": {f.name: f.to_dict() for f in plugin.formats.values()},
            "location": found.location,
            "writable": found.writable,
            "defaultInputFormat": found.config.default_format,
        }
    return QueryResult(
        table=pa.table(
            {
                "schema": pa.array([full], pa.string()),
                "properties": pa.array([drill_json.dumps(props)], pa.string()),
            }
        ),
        statement="DESCRIBE",
    )
