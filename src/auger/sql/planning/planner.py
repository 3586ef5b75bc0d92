"""SELECT planning: Drill names and semantics in, one Spark DataFrame out.

:func:`plan_select` runs :data:`RULES` in order over one
:class:`~auger.sql.planning.select_plan.SelectPlan` (each rule is a module of
:mod:`auger.sql.planning.rules`):

1. find every table the query reads (CTE and derived-table names excluded);
2. resolve each through the catalog, list its files and discover its schema;
3. compute what each scan must deliver: the columns the query names (or all, for ``*``),
   implicit (``filename``...) and partition (``dirN``) columns, and named-but-absent columns as
   typed nulls (Drill's rule);
4. plan each file table's scan and build its DataFrame (the ``auger`` data source, Spark's own
   Parquet reader, or a read on the driver that answers a small ``LIMIT`` by itself);
5. rewrite the query onto the DataFrames, with Drill→Spark rewrites and Drill's output names
   (``EXPR$0``);
6. hand the Spark SQL to Spark with those DataFrames as its tables
   (:mod:`auger.spark.frame_sql`: nothing is registered in the session's catalog).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from auger.errors import UserError
from auger.scan.plan import PlannedScan
from auger.sql.catalog.resolution import ViewTable
from auger.sql.context import StatementContext
from auger.sql.frontend.parser import parse_statement
from auger.sql.planning.rules.drill_to_spark import drill_to_spark
from auger.sql.planning.rules.find_tables import find_tables
from auger.sql.planning.rules.missing_members_as_null import missing_members_as_null
from auger.sql.planning.rules.plan_scans import plan_scans
from auger.sql.planning.rules.requested_columns import requested_columns
from auger.sql.planning.rules.resolve_tables import resolve_tables
from auger.sql.planning.rules.run_spark_sql import run_spark_sql
from auger.sql.planning.rules.tables_as_frames import tables_as_frames
from auger.sql.planning.select_plan import PlanContext, SelectPlan
from auger.sql.planning.tables import plan_file_scan

__all__ = ["RULES", "PlanContext", "PlannedScan", "plan_file_scan", "plan_select"]

#: The planner, in order; a rule that answers the query (``SelectPlan.answer``) ends it.
RULES: tuple[Callable[[SelectPlan], None], ...] = (
    find_tables,
    resolve_tables,
    requested_columns,
    plan_scans,
    missing_members_as_null,
    tables_as_frames,
    drill_to_spark,
    run_spark_sql,
)

#: Views nested deeper than this are taken to reference themselves.
MAX_VIEW_DEPTH = 32


def plan_select(
    tree: exp.Expression,
    statement: StatementContext,
    context: PlanContext | None = None,
    local: bool = False,
    schema_only: bool = False,
) -> Any:
    """Plan a SELECT (or a set operation) and return the Spark DataFrame that answers it.

    With ``local``, a bare ``SELECT * ... LIMIT n`` whose scan is read on the driver anyway
    returns a :class:`~auger.sql.planning.local_answer.LocalAnswer` instead (see that module).
    With ``schema_only``, the plan is for its schema alone (``DESCRIBE``): no value will be
    read, so a column whose files disagree about its type is planned with its first type
    rather than failing (:func:`auger.formats.conflicts.check_read` is not asked), in the
    views it expands too.
    """
    plan = SelectPlan(
        tree.copy(),
        statement,
        context,
        local,
        view_frame=functools.partial(
            view_dataframe, statement=statement, context=context, schema_only=schema_only
        ),
        spark=statement.spark,
        options=statement.settings,
        schema_only=schema_only,
    )
    for rule in RULES:
        rule(plan)
        if plan.answer is not None:
            break
    return plan.answer


def view_dataframe(
    ref: ViewTable,
    statement: StatementContext,
    context: PlanContext | None,
    schema_only: bool = False,
) -> Any:
    """Plan a view's SQL in the schema it was created in; name its columns as it says."""
    depth = (context.depth if context else 0) + 1
    if depth > MAX_VIEW_DEPTH:
        raise UserError.validation(
            f"View [{ref.name}] nests deeper than {MAX_VIEW_DEPTH} levels; does it refer to itself?"
        )
    schema_path = ".".join(ref.view.workspace_schema_path) or None
    tree = parse_statement(ref.view.sql)
    where = PlanContext(schema_path, in_view=True, depth=depth)
    df = plan_select(tree, statement, where, schema_only=schema_only)
    names = ref.view.column_names
    if names and len(names) == len(df.columns) and names != list(df.columns):
        df = df.toDF(*names)
    return df
