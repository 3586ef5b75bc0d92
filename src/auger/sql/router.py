"""Statement routing: Drill-only commands, DDL handlers, or the SELECT planner.

``execute_statement`` is the single entry from a session: it parses, picks the handler, and
returns a :class:`~auger.sql.result.QueryResult`. Handlers for further statement kinds register
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
from auger.sql.planning.diagnostics import collecting
from auger.sql.planning.local_answer import LocalAnswer
from auger.sql.planning.planner import plan_select
from auger.sql.result import QueryResult, ok_result

if TYPE_CHECKING:
    from auger.session import UserSession

__all__ = ["COMMAND_HANDLERS", "HANDLERS", "execute_statement"]


def _set_option(c: cmd.SetOption, session: UserSession) -> QueryResult:
    if c.scope == "SYSTEM":
        session.require_admin("ALTER SYSTEM")
        target: Any = session.engine.system_options
    else:
        target = session.options
    if not c.has_value:
        name = session.engine.system_options.definition(c.name).name
        value = (session.engine.system_options if c.scope == "SYSTEM" else session.options).get(
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
        session.engine.deny_cache_location(target.get(name))
    return ok_result(True, f"{name} updated.", "SET")


def _reset_option(c: cmd.ResetOption, session: UserSession) -> QueryResult:
    if c.scope == "SYSTEM":
        session.require_admin("ALTER SYSTEM")
        target: Any = session.engine.system_options
    else:
        target = session.options
    if c.name is None:
        target.reset_all()
        return ok_result(True, "ALL updated.", "RESET")
    name = target.reset(c.name)
    return ok_result(True, f"{name} updated.", "RESET")


def _use(c: cmd.UseSchema, session: UserSession) -> QueryResult:
    name = session.use_schema(c.name)
    if name.endswith(".default") and c.name.rsplit(".", 1)[-1].lower() != "default":
        name = name.removesuffix(".default")  # ``USE dfs`` selects the plugin: Drill says [dfs]
    return ok_result(True, f"Default schema changed to [{name}]", "USE")


COMMAND_HANDLERS: dict[type, Callable[[Any, UserSession], QueryResult]] = {
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


def _select(tree: exp.Expression, session: UserSession) -> QueryResult:
    planned = plan_select(tree, session, local=True)
    if isinstance(planned, LocalAnswer):
        return QueryResult(
            table=planned.table,
            spark_schema=planned.spark_schema,
            frame_factory=lambda: plan_select(tree, session),
            statement="SELECT",
        )
    return QueryResult(dataframe=planned, statement="SELECT")


def _create(tree: exp.Create, session: UserSession) -> QueryResult:
    if str(tree.args.get("kind") or "").upper() != "TABLE":
        raise UserError.unsupported(f"CREATE {tree.args.get('kind')} is not supported")
    return create_table(tree, session)


def _drop(tree: exp.Drop, session: UserSession) -> QueryResult:
    if str(tree.args.get("kind") or "").upper() != "TABLE":
        raise UserError.unsupported(f"DROP {tree.args.get('kind')} is not supported")
    return drop_table(tree, session)


HANDLERS: dict[type, Callable[[Any, UserSession], QueryResult]] = {
    exp.Create: _create,
    exp.Drop: _drop,
    exp.Select: _select,
    exp.Union: _select,
    exp.Intersect: _select,
    exp.Except: _select,
    exp.Subquery: _select,
    exp.Values: _select,
}


def execute_statement(sql: str, session: UserSession) -> QueryResult:
    """Run one statement in a session; what planning noticed becomes the result's warnings
    (:mod:`auger.sql.planning.diagnostics`)."""
    with collecting() as diagnostics:
        result = _run_statement(sql, session)
    result.warnings.extend(n for n in diagnostics.notes if n not in result.warnings)
    result.diagnostics = diagnostics
    return result


def _run_statement(sql: str, session: UserSession) -> QueryResult:
    command = cmd.parse_command(sql)
    if command is not None:
        return COMMAND_HANDLERS[type(command)](command, session)
    tree = parse_statement(sql)
    for kind in type(tree).__mro__:
        handler = HANDLERS.get(kind)
        if handler is not None:
            try:
                return handler(tree, session)
            except RecursionError:  # the planner's and generator's walks of a deep tree
                raise too_deep(sql) from None
    if not isinstance(tree, exp.Query | exp.DDL | exp.DML | exp.Describe | exp.Use | exp.Show):
        raise UserError.parse(
            "Non-query expression encountered in illegal context", [f"SQL Query: {sql.strip()}"]
        )
    raise UserError.unsupported(
        f"{tree.key.upper()} statements are not supported yet", [f"SQL Query: {sql.strip()}"]
    )
