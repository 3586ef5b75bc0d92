"""``CREATE [OR REPLACE] VIEW [IF NOT EXISTS]`` and ``DROP VIEW [IF EXISTS]``, with Drill's words.

A view is planned once at creation (so a broken query fails then, and the file records the
columns it produces) and stored as ``<name>.view.drill`` beside the workspace's tables, with the
default schema of the session that made it; the planner expands it on every use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from auger.errors import UserError
from auger.spark.errors import write_errors
from auger.sql.catalog.resolution import display_schema
from auger.sql.frontend.dialect import AugerDrill
from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.statement_grammar import CreateView, DropView
from auger.sql.planning.no_temporary_in_views import check_no_temporary_tables
from auger.sql.planning.planner import PlanContext, plan_select
from auger.sql.planning.tables import table_nodes
from auger.sql.result import QueryResult, ok_result
from auger.storage import filesystem as fs
from auger.storage.views import View, ViewField, find_view_file, view_path, write_view
from auger.storage.workspace import Workspace
from auger.types import ColumnMetadata, DataMode, MinorType
from auger.types.spark import spark_to_column

if TYPE_CHECKING:
    from auger.sql.context import StatementContext

__all__ = ["create_view", "drop_view", "view_field", "view_sql"]

#: Drill minor type → the Calcite type name a view file records.
_CALCITE_TYPES: dict[MinorType, str] = {
    MinorType.TINYINT: "TINYINT",
    MinorType.SMALLINT: "SMALLINT",
    MinorType.INT: "INTEGER",
    MinorType.BIGINT: "BIGINT",
    MinorType.FLOAT4: "FLOAT",
    MinorType.FLOAT8: "DOUBLE",
    MinorType.VARDECIMAL: "DECIMAL",
    MinorType.BIT: "BOOLEAN",
    MinorType.VARCHAR: "VARCHAR",
    MinorType.VARBINARY: "VARBINARY",
    MinorType.DATE: "DATE",
    MinorType.TIME: "TIME",
    MinorType.TIMESTAMP: "TIMESTAMP",
    MinorType.INTERVALDAY: "INTERVAL_DAY",
    MinorType.INTERVALYEAR: "INTERVAL_YEAR_MONTH",
}


def view_field(col: ColumnMetadata) -> ViewField:
    """The view-file field of a result column (complex values are Calcite's ``ANY``)."""
    if col.mode is DataMode.REPEATED or not col.type.is_scalar:
        return ViewField(col.name, "ANY", True)
    name = _CALCITE_TYPES.get(col.type, "ANY")
    extra: dict[str, Any] = {}
    if col.type is MinorType.VARDECIMAL:
        extra = {"precision": col.precision, "scale": col.scale}
    elif col.type is MinorType.VARCHAR:
        extra = {"precision": col.precision or 65536}
    return ViewField(col.name, name, col.mode is not DataMode.REQUIRED, extra)


def view_sql(tree: exp.Expression) -> str:
    """The SQL a view file stores: Drill's dialect with every identifier back-quoted.

    Top-level clauses start on their own line, as in the files Drill writes.
    """

    def gen(node: exp.Expression) -> str:
        return node.sql(dialect=AugerDrill, identify=True, normalize_functions="upper").strip()

    if not isinstance(tree, exp.Select):
        return gen(tree)
    select = tree.copy()
    from_key = "from_" if "from_" in select.arg_types else "from"
    keys = (from_key, "where", "group", "having", "order", "limit", "offset")
    clauses = [(key, select.args.get(key)) for key in keys]
    joins = select.args.get("joins") or []
    for key in (*keys, "joins"):
        select.set(key, None)
    lines = [gen(select)]
    for key, node in clauses:
        if node is None:
            continue
        text = gen(node)
        if key == from_key and joins:
            text += " " + " ".join(gen(j) for j in joins)
        lines.append(text)
    return "\n".join(lines)


def _temporary_exists(statement: StatementContext, ws: Workspace, name: str) -> bool:
    return statement.catalog.is_temporary_table([*ws.name.split("."), name])


def _table_exists(ws: Workspace, name: str) -> bool:
    """A non-view table: a file or directory of that name in the workspace."""
    try:
        return fs.exists(ws.resolve(name))
    except UserError:
        return False


def create_view(c: CreateView, statement: StatementContext) -> QueryResult:
    if c.replace and c.if_not_exists:
        raise UserError.validation(
            "Create view statement cannot have both <OR REPLACE> and <IF NOT EXISTS> clause"
        )
    ws = statement.catalog.resolve_mutable_schema(c.name[:-1])
    name = c.name[-1].lstrip("/")
    schema = display_schema(ws.name)
    tree = parse_statement(c.query)
    if not isinstance(tree, exp.Query):
        raise UserError.validation("A view must be defined by a query (SELECT ...)")
    check_no_temporary_tables(table_nodes(tree), statement.catalog, statement.default_schema)

    existing_view = find_view_file(ws, name)
    non_view = _temporary_exists(statement, ws, name) or _table_exists(ws, name)
    if c.if_not_exists and (existing_view or non_view):
        return ok_result(
            False,
            f"A table or view with given name [{name}] already exists in schema [{schema}]",
            "CREATE VIEW",
        )
    if non_view:
        raise UserError.validation(
            f"A non-view table with given name [{name}] already exists in schema [{schema}]"
        )
    if existing_view and not c.replace:
        raise UserError.validation(
            f"A view with given name [{name}] already exists in schema [{schema}]"
        )

    df = plan_select(tree, statement, PlanContext(statement.default_schema, in_view=True))
    cols = [spark_to_column(f.name, f.dataType, f.nullable) for f in df.schema.fields]
    if c.columns is not None:
        if _has_star(tree):
            raise UserError.validation(
                "view's query field list has a '*', which is invalid when view's field list "
                "is specified."
            )
        if len(c.columns) != len(cols):
            raise UserError.validation(
                "view's field list and the view's query field list have different counts."
            )
        seen: set[str] = set()
        for n in c.columns:
            if n.lower() in seen:
                raise UserError.validation(f"Duplicate column name [{n}]")
            seen.add(n.lower())
        cols = [col.renamed(n) for col, n in zip(cols, c.columns, strict=True)]
    else:
        _check_duplicate_names(tree)
    view = View(
        name,
        view_sql(tree),
        tuple(view_field(col) for col in cols),
        tuple(statement.default_schema.split(".")) if statement.default_schema else (),
    )
    with write_errors(f"view [{name}]", view_path(ws, name)):
        if existing_view and fs.basename(existing_view) != f"{name}.view.drill":
            fs.delete_file(existing_view)  # a differently-cased file of the same view
        write_view(ws, view)
    verb = "replaced" if existing_view else "created"
    return ok_result(True, f"View '{name}' {verb} successfully in '{schema}' schema", "CREATE VIEW")


def _check_duplicate_names(tree: exp.Expression) -> None:
    """Without a field list, the query's own column names must be unique (case-insensitive)."""
    node = tree
    while isinstance(node, exp.SetOperation):
        node = node.this
    if not isinstance(node, exp.Select):
        return
    seen: set[str] = set()
    for e in node.expressions:
        if isinstance(e, exp.Alias):
            name = e.alias
        elif isinstance(e, exp.Column) and not isinstance(e.this, exp.Star):
            name = e.name
        else:
            continue
        if name.lower() in seen:
            raise UserError.validation(f"Duplicate column name [{name}]")
        seen.add(name.lower())


def _has_star(tree: exp.Expression) -> bool:
    node = tree
    while isinstance(node, exp.SetOperation):
        node = node.this
    if not isinstance(node, exp.Select):
        return False
    return any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
        for e in node.expressions
    )


def drop_view(c: DropView, statement: StatementContext) -> QueryResult:
    ws = statement.catalog.resolve_mutable_schema(c.name[:-1])
    name = c.name[-1].lstrip("/")
    schema = display_schema(ws.name)
    path = find_view_file(ws, name)
    if path is None:
        non_view = _temporary_exists(statement, ws, name) or _table_exists(ws, name)
        if c.if_exists:
            return ok_result(False, f"View [{name}] not found in schema [{schema}].", "DROP VIEW")
        if non_view:
            raise UserError.validation(f"[{name}] is not a VIEW in schema [{schema}]")
        raise UserError.validation(f"Unknown view [{name}] in schema [{schema}].")
    fs.delete_file(path)
    return ok_result(
        True, f"View [{name}] deleted successfully from schema [{schema}].", "DROP VIEW"
    )
