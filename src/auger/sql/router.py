"""Statement routing: Drill-only commands, DDL handlers, or the SELECT planner.

``execute_statement`` is the single entry from a session: given the statement's context
(:mod:`auger.sql.context`), it parses, picks the handler, and returns a
:class:`~auger.sql.result.QueryResult`. Handlers for further statement kinds register
in ``HANDLERS`` (sqlglot expression type → handler) or ``COMMAND_HANDLERS`` (command value type
→ handler).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from auger.errors import UserError
from auger.sql.catalog import show
from auger.sql.ddl import schema_commands
from auger.sql.ddl import view_commands as views
from auger.sql.ddl.ctas import create_table
from auger.sql.ddl.drop_table import drop_table
from auger.sql.frontend import command_grammar as cmd
from auger.sql.frontend import statement_grammar as st
from auger.sql.frontend.nesting import too_deep
from auger.sql.frontend.parser import parse_statement
from auger.sql.planning.local_answer import LocalAnswer
from auger.sql.planning.planner import plan_select
from auger.sql.result import QueryResult, ok_result

if TYPE_CHECKING:
    from auger.sql.context import StatementContext

__all__ = ["COMMAND_HANDLERS", "HANDLERS", "execute_statement"]


def _set_option(c: cmd.SetOption, statement: StatementContext) -> QueryResult:
    if c.scope == "SYSTEM":
        statement.require_admin("ALTER SYSTEM")
        target: Any = statement.engine.system_options
    else:
        target = statement.options
    if not c.has_value:
        name = statement.engine.system_options.definition(c.name).name
        value = (statement.engine.system_options if c.scope == "SYSTEM" else statement.options).get(
            name
        )
        table = pa.table(
            {
                "name": [name],
                "value": [str(value).lower() if isinstance(value, bool) else str(value)],
            }
        )
        return QueryResult(table=table, statement="SET")
    name = target.set(c.name, c.value)
    if name == "auger.cache.location":  # no query may reach the raw-file cache
        statement.engine.deny_cache_location(target.get(name))
    return ok_result(True, f"{name} updated.", "SET")


def _reset_option(c: cmd.ResetOption, statement: StatementContext) -> QueryResult:
    if c.scope == "SYSTEM":
        statement.require_admin("ALTER SYSTEM")
        target: Any = statement.engine.system_options
    else:
        target = statement.options
    if c.name is None:
        target.reset_all()
        return ok_result(True, "ALL updated.", "RESET")
    name = target.reset(c.name)
    return ok_result(True, f"{name} updated.", "RESET")


def _use(c: cmd.UseSchema, statement: StatementContext) -> QueryResult:
    name = statement.catalog.use_schema(c.name)
    if name.endswith(".default") and c.name.rsplit(".", 1)[-1].lower() != "default":
        name = name.removesuffix(".default")  # ``USE dfs`` selects the plugin: Drill says [dfs]
    return ok_result(True, f"Default schema changed to [{name}]", "USE")


COMMAND_HANDLERS: dict[type, Callable[[Any, StatementContext], QueryResult]] = {
    cmd.SetOption: _set_option,
    cmd.ResetOption: _reset_option,
    cmd.UseSchema: _use,
    cmd.ShowSchemas: show.show_schemas,
    st.ShowTables: show.show_tables,
    st.ShowFiles: show.show_files,
    st.Describe: show.describe_table,
    st.DescribeSchemaOf: show.describe_schema_of,
    st.RefreshMetadata: show.refresh_metadata,
    st.Explain: show.explain,
    st.CreateView: views.create_view,
    st.DropView: views.drop_view,
    st.CreateSchema: schema_commands.create_schema,
    st.DropSchema: schema_commands.drop_schema,
    st.DescribeSchema: schema_commands.describe_schema,
    st.AlterSchema: schema_commands.alter_schema,
}


def _select(tree: exp.Expression, statement: StatementContext) -> QueryResult:
    planned = plan_select(tree, statement, local=True)
    if isinstance(planned, LocalAnswer):
        return QueryResult(
            table=planned.table,
            spark_schema=planned.spark_schema,
            # planned again when a DataFrame is asked for: its scans were counted already
            frame_factory=lambda: plan_select(tree, statement.unrecorded()),
            statement="SELECT",
        )
    return QueryResult(dataframe=planned, statement="SELECT")


def _create(tree: exp.Create, statement: StatementContext) -> QueryResult:
    if str(tree.args.get("kind") or "").upper() != "TABLE":
        raise UserError.unsupported(f"CREATE {tree.args.get('kind')} is not supported")
    return create_table(tree, statement)


def _drop(tree: exp.Drop, statement: StatementContext) -> QueryResult:
    if str(tree.args.get("kind") or "").upper() != "TABLE":
        raise UserError.unsupported(f"DROP {tree.args.get('kind')} is not supported")
    return drop_table(tree, statement)


HANDLERS: dict[type, Callable[[Any, StatementContext], QueryResult]] = {
    exp.Create: _create,
    exp.Drop: _drop,
    exp.Select: _select,
    exp.Union: _select,
    exp.Intersect: _select,
    exp.Except: _select,
    exp.Subquery: _select,
    exp.Values: _select,
}


def execute_statement(statement: StatementContext) -> QueryResult:
    """Run one statement (``statement.sql``) in the context its session built; what planning
    noticed becomes the result's warnings (:mod:`auger.sql.planning.diagnostics`), and what it
    recorded travels with the result."""
    result = _run_statement(statement.sql, statement)
    diagnostics = statement.recordings.diagnostics
    if diagnostics is not None:
        result.warnings.extend(n for n in diagnostics.notes if n not in result.warnings)
        result.diagnostics = diagnostics
    if result.planned_scans is None:
        result.planned_scans = statement.recordings.scans
    return result


def _run_statement(sql: str, statement: StatementContext) -> QueryResult:
    command = cmd.parse_command(sql)
    if command is not None:
        return COMMAND_HANDLERS[type(command)](command, statement)
    tree = parse_statement(sql)
    for kind in type(tree).__mro__:
        handler = HANDLERS.get(kind)
        if handler is not None:
            try:
                return handler(tree, statement)
            except RecursionError:  # the planner's and generator's walks of a deep tree
                raise too_deep(sql) from None
    if not isinstance(tree, exp.Query | exp.DDL | exp.DML | exp.Describe | exp.Use | exp.Show):
        raise UserError.parse(
            "Non-query expression encountered in illegal context", [f"SQL Query: {sql.strip()}"]
        )
    raise UserError.unsupported(
        f"{tree.key.upper()} statements are not supported yet", [f"SQL Query: {sql.strip()}"]
    )
