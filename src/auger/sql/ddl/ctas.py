"""``CREATE [TEMPORARY] TABLE [IF NOT EXISTS] t [(cols)] [PARTITION BY (cols)] AS query``.

A persistent table (CTAS) is a directory in a writable workspace: the target schema is the one
named, else the session's default schema. A temporary table (CTTAS) lives
only in the default temporary workspace, whether it is named or not, under the session's own
folder and a generated name; the session finds it by the name given here.

Both check the name (no table, view or temporary table of that name may exist), the column list
and the partition columns with Drill's messages, plan the query, and write it in
``store.format`` through :mod:`auger.storage.table_files`, answering ``Fragment | Number of records
written``. Where Drill's temporary-table messages differ from its later CTAS ones, CTTAS keeps
the temporary-table wording (the tests pin each text).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from auger.errors import UserError
from auger.spark.errors import write_errors
from auger.spark.writer import write_table
from auger.sql.planning.planner import plan_select
from auger.sql.result import QueryResult, ok_result
from auger.storage import filesystem as fs
from auger.storage.table_files import (
    TEMPORARY,
    StorageStrategy,
    WriteResult,
    WriterFormat,
    writer_format,
)
from auger.storage.views import find_view_file
from auger.storage.workspace import Workspace

if TYPE_CHECKING:
    from auger.sql.context import StatementContext

__all__ = [
    "ROOT_IMMUTABLE",
    "create_table",
    "display_name",
    "mutable_workspace",
    "table_exists",
]

_log = logging.getLogger(__name__)

ROOT_IMMUTABLE = (
    "Root schema is immutable. Drill does not allow creating or deleting tables or views in the "
    "root schema. Select a schema using 'USE schema' command."
)
_EXISTS = "A table or view with given name [{name}] already exists in schema [{schema}]"
_OUTSIDE = (
    "Temporary tables are not allowed to be created outside of default temporary workspace "
    "[{workspace}]."
)
_IMMUTABLE = "Unable to create or drop objects. Schema [{schema}] is immutable."
_IMMUTABLE_TEMPORARY = "Unable to create or drop tables/views. Schema [{schema}] is immutable."
_STAR_WITH_FIELDS = (
    "table's query field list has a '*', which is invalid when table's field list is specified."
)
_COUNTS = "table's field list and the table's query field list have different counts."
_COUNTS_TEMPORARY = "Table's field list and the table's query field list have different counts."


def display_name(schema: Workspace | str) -> str:
    """A schema as Drill names it in messages: a plugin's default workspace by the plugin."""
    name = schema if isinstance(schema, str) else schema.name
    return name.removesuffix(".default")


def _not_valid(parts: Sequence[str], statement: StatementContext) -> UserError:
    return UserError.validation(
        f"Schema [{'.'.join(parts)}] is not valid with respect to either root schema or "
        "current default schema.",
        [f"Current default schema: {statement.default_schema or 'No default schema selected'}"],
    )


def mutable_workspace(
    statement: StatementContext, schema_parts: Sequence[str], temporary: bool = False
) -> Workspace:
    """The writable workspace a CREATE or DROP targets (the default schema when none is named).

    Raises:
        UserError: VALIDATION for the root schema, an unknown or an immutable schema (the
            immutable message in Drill's temporary-table wording when ``temporary``).
    """
    parts = [x for p in schema_parts for x in p.split(".") if x]
    if not parts and not statement.default_schema:
        raise UserError.validation(ROOT_IMMUTABLE)
    found = statement.catalog.find_schema(parts)
    if found is None:
        raise _not_valid(parts, statement)
    template = _IMMUTABLE_TEMPORARY if temporary else _IMMUTABLE
    if isinstance(found, str) or not found.writable:
        raise UserError.validation(template.format(schema=display_name(found)))
    return found


def table_exists(ws: Workspace, name: str, statement: StatementContext) -> bool:
    """Whether a table, a view or (in the temporary workspace) a temporary table has ``name``."""
    if statement.catalog.is_temporary_workspace(ws) and statement.temporary.get(name) is not None:
        return True
    if not name:
        return True  # the workspace folder itself
    path = ws.resolve(name)
    if fs.exists(path) if fs.is_uri(path) else os.path.lexists(path):
        return True
    return find_view_file(ws, name.lstrip("/")) is not None


@dataclass(frozen=True)
class _Statement:
    """The parts of a CREATE TABLE statement this handler needs."""

    name: str  # leading '/' removed
    schema_parts: list[str]
    columns: list[str]
    partition_by: list[str]
    temporary: bool
    if_not_exists: bool
    query: exp.Expression


def _statement(tree: exp.Create) -> _Statement:
    target = tree.this
    columns: list[str] = []
    if isinstance(target, exp.Schema):
        columns = [c.name for c in target.expressions]
        target = target.this
    if not isinstance(target, exp.Table):
        raise UserError.parse("CREATE TABLE needs a table name")
    parts = [p.name for p in target.parts]
    temporary = False
    partition_by: list[str] = []
    props = tree.args.get("properties")
    for prop in props.expressions if props is not None else []:
        if isinstance(prop, exp.TemporaryProperty):
            temporary = True
        elif isinstance(prop, exp.PartitionedByProperty):
            spec = prop.this
            items = spec.expressions if isinstance(spec, exp.Schema | exp.Tuple) else [spec]
            partition_by = [i.name for i in items]
        else:
            raise UserError.unsupported(
                f"CREATE TABLE does not support [{prop.sql(dialect='drill')}]"
            )
    query = tree.expression
    if query is None:
        raise UserError.parse(
            "CREATE TABLE needs AS followed by a query",
            ["Drill creates tables only from queries: CREATE TABLE t AS SELECT ..."],
        )
    while isinstance(query, exp.Subquery) and not query.alias:
        query = query.this
    return _Statement(
        name=parts[-1].lstrip("/"),
        schema_parts=parts[:-1],
        columns=columns,
        partition_by=partition_by,
        temporary=temporary,
        if_not_exists=bool(tree.args.get("exists")),
        query=query,
    )


def _first_select(query: exp.Expression) -> exp.Select | None:
    node = query
    while isinstance(node, exp.SetOperation | exp.Subquery):
        node = node.this
    return node if isinstance(node, exp.Select) else None


def _query_fields(query: exp.Expression) -> list[str | None]:
    """The query's output field names as Drill validates them (None for a ``*``)."""
    select = _first_select(query)
    if select is None:
        return []
    fields: list[str | None] = []
    for pos, e in enumerate(select.expressions):
        if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
            fields.append(None)
        elif isinstance(e, exp.Alias):
            fields.append(e.alias)
        elif isinstance(e, exp.Column) and not e.args.get("db") and not e.args.get("catalog"):
            fields.append(e.name)
        else:
            fields.append(f"EXPR${pos}")
    return fields


def _check_duplicates(names: Sequence[str | None]) -> None:
    seen: set[str] = set()
    for name in names:
        if name is None:
            continue
        if name.lower() in seen:
            raise UserError.validation(f"Duplicate column name [{name}]")
        seen.add(name.lower())


def _check_fields(stmt: _Statement) -> None:
    """Drill's checks of the table's field list against the query's (before planning)."""
    fields = _query_fields(stmt.query)
    has_star = any(f is None for f in fields)
    if stmt.columns:
        if fields and len(fields) != len(stmt.columns):
            if has_star:
                raise UserError.validation(_STAR_WITH_FIELDS)
            raise UserError.validation(_COUNTS_TEMPORARY if stmt.temporary else _COUNTS)
        if has_star:
            raise UserError.validation(_STAR_WITH_FIELDS)
        _check_duplicates(stmt.columns)
    else:
        _check_duplicates(fields)


def _final_names(stmt: _Statement, df_columns: list[str]) -> list[str]:
    if stmt.columns:
        if len(stmt.columns) != len(df_columns):
            raise UserError.validation(_COUNTS_TEMPORARY if stmt.temporary else _COUNTS)
        return list(stmt.columns)
    _check_duplicates(df_columns)
    return list(df_columns)


def _partition_columns(stmt: _Statement, names: list[str]) -> list[str]:
    by_lower = {n.lower(): n for n in names}
    out: list[str] = []
    for col in stmt.partition_by:
        found = by_lower.get(col.lower())
        if found is None:
            raise UserError.validation(f"Partition column {col} is not in the SELECT list of CTAS!")
        out.append(found)
    return out


def _target(stmt: _Statement, statement: StatementContext) -> Workspace:
    if not stmt.temporary:
        return mutable_workspace(statement, stmt.schema_parts)
    temp_ws = statement.catalog.temporary_workspace()
    if not stmt.schema_parts:
        # regardless of USE, as in Drill; it may have been made read-only
        # since start-up through a workspace update
        if not temp_ws.writable:
            raise UserError.validation(_IMMUTABLE_TEMPORARY.format(schema=display_name(temp_ws)))
        return temp_ws
    ws = mutable_workspace(statement, stmt.schema_parts, temporary=True)
    if not statement.catalog.is_temporary_workspace(ws):
        raise UserError.validation(_OUTSIDE.format(workspace=temp_ws.name))
    return ws


def create_table(tree: exp.Create, statement: StatementContext) -> QueryResult:
    """Run a CTAS or CTTAS statement."""
    stmt = _statement(tree)
    ws = _target(stmt, statement)
    schema = display_name(ws)
    if table_exists(ws, stmt.name, statement):
        summary = _EXISTS.format(name=stmt.name, schema=schema)
        if stmt.if_not_exists:
            return ok_result(False, summary, "CREATE TABLE")
        raise UserError.validation(summary + ".")
    _check_fields(stmt)
    options = statement.options
    fmt = writer_format(str(options["store.format"]), ws.plugin.formats, options.snapshot())
    if stmt.partition_by and not fmt.supports_partitioning:
        raise UserError.unsupported(
            f"{fmt.name.capitalize()} format does not support auto-partitioning."
        )

    df = plan_select(stmt.query, statement)
    names = _final_names(stmt, list(df.columns))
    if names != list(df.columns):
        df = df.toDF(*names)
    partition_by = _partition_columns(stmt, names)

    try:
        if stmt.temporary:
            _log.info("Temporary table [%s] is being created.", stmt.name)
            result = _write_temporary(stmt, ws, df, fmt, partition_by, statement)
        else:
            _log.info("Creating persistent table [%s].", stmt.name)
            path = ws.resolve(stmt.name)
            strategy = StorageStrategy(str(options["exec.persistent_table.umask"]))
            with write_errors(f"table [{stmt.name}]", path):
                result = write_table(
                    df, path, fmt, strategy, partition_by, statement.temporary.owner.engine_id
                )
    except FileExistsError:  # created by another statement while this one was writing
        raise UserError.validation(_EXISTS.format(name=stmt.name, schema=schema) + ".") from None
    return QueryResult(table=result.to_arrow(), statement="CREATE TABLE")


def _write_temporary(
    stmt: _Statement,
    ws: Workspace,
    df: Any,
    fmt: WriterFormat,
    partition_by: list[str],
    statement: StatementContext,
) -> WriteResult:
    """Write a temporary table into the session's location; a failed write leaves no trace.

    The session location is made on the first CTTAS; when that statement fails, the location
    goes again (unless it already holds tables), so the workspace is as it was.
    """
    had_location = statement.temporary.has_location(ws.location)
    path = statement.temporary.location_path(ws.location)
    try:
        with write_errors(f"temporary table [{stmt.name}]", path):
            generated, path = statement.temporary.allocate(ws.location)
            result = write_table(
                df, path, fmt, TEMPORARY, partition_by, statement.temporary.owner.engine_id
            )
    except BaseException:
        if not had_location:
            statement.temporary.discard_empty_location(ws.location)
        raise
    statement.temporary.register(stmt.name, generated, path, ws.name)
    return result
