"""Rule: evaluate the query directory functions and find the tables the query reads."""

from __future__ import annotations

from sqlglot import exp

from auger.spark.frame_sql import frame_names
from auger.sql.planning.dirfunctions import query_directory_functions
from auger.sql.planning.local_answer import is_bare_star
from auger.sql.planning.no_temporary_in_views import check_no_temporary_tables
from auger.sql.planning.qualified_columns import unqualify_schema_columns
from auger.sql.planning.row_counts import count_rows_query
from auger.sql.planning.select_plan import SelectPlan
from auger.sql.planning.tables import table_nodes

__all__ = ["find_tables"]


def find_tables(plan: SelectPlan) -> None:
    """``MAXDIR``... evaluated; the physical tables, their Spark names, and what the query's
    shape allows (a pushed-down ``LIMIT``, a counting scan, an answer on the driver)."""
    plan.tree = query_directory_functions(plan.tree, plan.statement.catalog)
    plan.tables = table_nodes(plan.tree)
    unqualify_schema_columns(plan.tree, plan.tables)
    if plan.context is not None and plan.context.in_view:
        check_no_temporary_tables(plan.tables, plan.statement.catalog, plan.context.default_schema)
    n_tables = len(plan.tables)
    plan.names = frame_names(n_tables)
    plan.limit = _pushable_limit(plan.tree, n_tables)
    plan.counting = count_rows_query(plan.tree, n_tables)
    plan.answer_here = plan.local and n_tables == 1 and is_bare_star(plan.tree)


def _pushable_limit(tree: exp.Expression, n_tables: int) -> int | None:
    """A LIMIT that may stop the scan early: one table, no filter/aggregate/order/join."""
    if n_tables != 1 or not isinstance(tree, exp.Select):
        return None
    limit = tree.args.get("limit")
    if limit is None or tree.args.get("offset") is not None:
        return None
    if any(
        tree.args.get(k)
        for k in ("where", "group", "having", "order", "joins", "distinct", "qualify")
    ):
        return None
    if any(isinstance(e, exp.AggFunc) for s in tree.selects for e in s.find_all(exp.AggFunc)):
        return None
    if any(s.find(exp.Explode, exp.Flatten) for s in tree.selects):
        return None
    value = limit.expression
    if isinstance(value, exp.Literal) and value.is_int:
        return int(value.this)
    return None
