"""``CREATE [OR REPLACE] SCHEMA``, ``DROP SCHEMA`` and ``DESCRIBE SCHEMA`` for tables.

A provided schema lives in the table directory's ``.drill.schema`` file (or at a PATH); the
planner then reads the table with these types. Messages follow Drill's SchemaHandler.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pyarrow as pa

from auger.errors import UserError
from auger.spark.errors import write_errors
from auger.sql.catalog.resolution import FileTable, SystemTable, TableRef, ViewTable, display_schema
from auger.sql.frontend.statement_grammar import (
    AlterSchema,
    CreateSchema,
    DescribeSchema,
    DropSchema,
)
from auger.sql.frontend.token_cursor import Cursor
from auger.sql.result import QueryResult, ok_result
from auger.storage.schema_file import (
    SCHEMA_FILE_NAME,
    SchemaFile,
    read_schema_file,
    schema_file_path,
    write_schema_file,
)
from auger.types import TupleSchema
from auger.types.schema_text import parse_schema

if TYPE_CHECKING:
    from auger.sql.context import StatementContext

__all__ = ["alter_schema", "create_schema", "describe_schema", "drop_schema"]


def _local_path(path: str) -> str:
    return path[len("file://") :] if path.startswith("file://") else path


def _table_dir(
    parts: list[str], statement: StatementContext, writing: bool
) -> tuple[FileTable, str]:
    """The table a schema command names, checked: file-based, (writable), existing, a directory."""
    name = ".".join(parts)
    if statement.catalog.is_temporary_table(parts):
        raise UserError.validation(f"Indicated table [{name}] is temporary table")
    try:
        ref: TableRef = statement.catalog.resolve_table(parts)
    except UserError as exc:
        if "not valid" in exc.message:
            raise UserError.validation(f"Table [{parts[-1]}] was not found") from None
        raise
    if isinstance(ref, SystemTable):
        raise UserError.validation(
            f"Unable to create or drop objects. Schema [{ref.schema}] is immutable."
        )
    if not isinstance(ref, FileTable) or isinstance(ref, ViewTable):
        raise UserError.validation(
            f"Table [`{ref.schema}`.`{ref.name}`] must belong to file storage plugin"
        )
    if writing and not ref.workspace.writable:
        raise UserError.validation(
            f"Unable to create or drop objects. Schema [{display_schema(ref.schema)}] is immutable."
        )
    if not os.path.exists(ref.path):
        raise UserError.validation(f"Table [{parts[-1]}] was not found")
    if not os.path.isdir(ref.path):
        raise UserError.resource(
            f"Indicated table [{display_schema(ref.schema)}.{ref.name.lstrip('/')}] must be a "
            "directory"
        )
    return ref, ref.path


def create_schema(c: CreateSchema, statement: StatementContext) -> QueryResult:
    columns_text = c.columns
    if c.load is not None:
        raw = _local_path(c.load)
        if not os.path.isfile(raw):
            raise UserError.resource(f"File with raw schema [{c.load}] does not exist")
        with open(raw, encoding="utf-8") as fh:
            columns_text = fh.read()
    schema = parse_schema(columns_text) if columns_text and columns_text.strip() else None
    cols = schema if schema is not None else TupleSchema()
    if c.table is not None:
        parts = list(c.table)
        ref, directory = _table_dir(parts, statement, writing=True)
        target = schema_file_path(directory)
        source = ".".join(parts)
        table_name = f"{ref.schema}.`{ref.name.lstrip('/')}`"
    else:
        assert c.path is not None
        target = _local_path(c.path)
        source = c.path
        table_name = None
        if not os.path.isdir(os.path.dirname(target) or "."):
            raise UserError.resource(f"Parent path for schema file [{c.path}] does not exist")
    if os.path.exists(target) and not c.replace:
        raise UserError.validation(f"Schema already exists for [{source}]")
    with write_errors(f"the schema of [{source}]", target):
        write_schema_file(target, SchemaFile(cols, dict(c.properties), table_name))
    return ok_result(True, f"Created schema for [{source}]", "CREATE SCHEMA")


def drop_schema(c: DropSchema, statement: StatementContext) -> QueryResult:
    parts = list(c.table)
    _ref, directory = _table_dir(parts, statement, writing=True)
    target = schema_file_path(directory)
    name = ".".join(parts)
    if not os.path.exists(target):
        message = f"Schema [{SCHEMA_FILE_NAME}] does not exist in table [{name}] root directory"
        if c.if_exists:
            return ok_result(False, message, "DROP SCHEMA")
        raise UserError.validation(message)
    os.remove(target)
    return ok_result(True, f"Dropped schema for table [{name}]", "DROP SCHEMA")


def describe_schema(c: DescribeSchema, statement: StatementContext) -> QueryResult:
    parts = list(c.table)
    _ref, directory = _table_dir(parts, statement, writing=False)
    target = schema_file_path(directory)
    if not os.path.exists(target):
        return ok_result(False, f"Schema for table [{'.'.join(parts)}] is absent", "DESCRIBE")
    provided = read_schema_file(target)
    text = provided.to_statement() if c.form == "STATEMENT" else provided.to_json()
    return QueryResult(
        table=pa.table({"schema": pa.array([text], pa.string())}), statement="DESCRIBE"
    )


def alter_schema(c: AlterSchema, statement: StatementContext) -> QueryResult:
    """``ALTER SCHEMA ... ADD [OR REPLACE]`` / ``REMOVE`` columns and properties."""
    if c.table is not None:
        parts = list(c.table)
        _ref, directory = _table_dir(parts, statement, writing=True)
        target = schema_file_path(directory)
        source = ".".join(parts)
    else:
        assert c.path is not None
        target = _local_path(c.path)
        source = c.path
    if not os.path.isfile(target):
        raise UserError.resource(f"Schema does not exist for [{source}]")
    current = read_schema_file(target)
    columns = TupleSchema(current.schema)
    props = dict(current.properties)
    if c.add:
        for col in parse_schema(c.columns) if c.columns else TupleSchema():
            if col.name in columns:
                if not c.replace:
                    raise UserError.validation(
                        f"Column [{col.name}] already exists in the schema of [{source}]"
                    )
                columns.replace(col)
            else:
                columns.add(col)
        for key, value in c.properties.items():
            if key in props and not c.replace:
                raise UserError.validation(
                    f"Property [{key}] already exists in the schema of [{source}]"
                )
            props[key] = value
    else:
        drop = set()
        if c.columns:
            cur = Cursor(c.columns)
            while not cur.at_end():
                drop.add(cur.name()[-1].lower())
                if cur.at_punct(","):
                    cur.take()
        columns = TupleSchema(col for col in columns if col.name.lower() not in drop)
        for key in c.properties:
            props.pop(key, None)
    with write_errors(f"the schema of [{source}]", target):
        write_schema_file(target, SchemaFile(columns, props, current.table, current.version))
    return ok_result(True, f"Schema for [{source}] was updated", "ALTER SCHEMA")
