"""Rule: plan each file table's scan and make it a DataFrame."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from sqlglot import exp

from auger.projection import quoted
from auger.scan.plan import ROW_COUNT_COLUMN, PlannedScan
from auger.scan.spec import ColumnSource
from auger.spark.frames import scan_frame
from auger.spark.local_scan import local_limit_table, whole_answer_table
from auger.spark.scan_report import ScanReport
from auger.sql.planning import diagnostics, explain
from auger.sql.planning.columns import table_alias
from auger.sql.planning.compact_columns import compact_columns_scan
from auger.sql.planning.local_answer import LocalAnswer, spark_result_table
from auger.sql.planning.pruning import prune_by_statistics, prune_scan
from auger.sql.planning.row_counts import counting_scan
from auger.sql.planning.select_plan import SelectPlan
from auger.sql.planning.star_columns import spell_out_star
from auger.sql.planning.tables import build_file_scan
from auger.sql.planning.typed_casts import may_read_typed
from auger.types import TupleSchema
from auger.types.spark import schema_to_spark

__all__ = ["plan_scans"]


def plan_scans(plan: SelectPlan) -> None:
    """Each file table's scan through the one scan-planning function, then pruned (files ruled
    out by ``WHERE`` on ``dirN``...), specialised (counting rows, ``columns[n]`` as plain
    columns) and made a DataFrame; a bare ``SELECT * ... LIMIT n`` read on the driver is the
    answer itself."""
    options = plan.options
    # every scan frame adds its run-time report to the statement's diagnostics
    reports = None if plan.statement.diagnostics is None else plan.statement.diagnostics.reports
    n_tables = len(plan.tables)
    for n, node in enumerate(plan.tables):
        if n not in plan.discovered:
            continue
        requested = plan.requested(n)
        star = requested.star
        if star:
            plan.starred.setdefault(table_alias(node).lower(), plan.discovered[n].schema)
        if plan.analysis is not None:
            planned = build_file_scan(
                plan.discovered[n],
                requested,
                options,
                True,
                plan.limit,
                check_types=True,
                notes=plan.statement.diagnostics,
                values_read=not plan.schema_only,
            )
        else:
            planned = build_file_scan(
                plan.discovered[n],
                requested,
                options,
                allow_missing=n_tables == 1,
                limit=plan.limit,
                never_missing=plan.defined,
                notes=plan.statement.diagnostics,
                values_read=not plan.schema_only,
            )
        planned = prune_scan(planned, node)  # files ruled out by WHERE on dirN etc.
        # an Iceberg or Delta table's files ruled out by their statistics
        planned = prune_by_statistics(planned, node, plan.discovered[n].selection)
        diagnostics.scan_planned(
            plan.statement.diagnostics, plan.discovered[n], requested, planned, options
        )
        if plan.counting:
            weighted = counting_scan(planned)
            if weighted is None:
                plan.counting = False
            else:
                planned = weighted
        if not plan.counting and (compact := compact_columns_scan(planned)) is not None:
            # columns[n] as plain string columns, see the module
            planned, plan.direct_positions[n] = compact
        # ``*`` over a table without columns: rows of no columns, as in Drill
        rows_only = star and planned.schema.names() == [ROW_COUNT_COLUMN]
        # a bare SELECT * of which the client takes only the first rows is Spark's to stop early
        whole = planned.spec.limit is not None or not plan.statement.row_cap
        if plan.answer_here and whole and not plan.counting and not planned.selects:
            answer = _local_answer(plan.spark, planned, options, reports, rows_only)
            if answer is not None:
                plan.answer = answer
                return
        # casts of cached text columns to numbers or dates, read from the entries' typed copies
        # (delivered after the table's columns, which a ``*`` would show)
        casts = n_tables == 1 and not plan.counting and may_read_typed(plan.tree)
        spell = casts and plan.tree.find(exp.Cast) is not None
        spelled = star and not rows_only and _spell_out_visible_star(node, planned, spell)
        # small files are read here only for a query that runs now (not for EXPLAIN)
        kept = plan.statement.engine.kept_frames
        typed: dict[tuple[str, str], str] | None = None
        if casts and (not star or spelled):
            typed = plan.typed_casts.setdefault(n, {})
        frame = scan_frame(
            plan.spark,
            planned,
            options,
            small_here=plan.local,
            reports=reports,
            kept=kept,
            typed=typed,
            note=None if plan.statement.diagnostics is None else plan.statement.diagnostics.note,
        )
        # what EXPLAIN names
        explain.scan_framed(plan.statement.recordings.scans, plan.discovered[n], planned, frame)
        if rows_only:
            frame = frame.drop(ROW_COUNT_COLUMN)
            plan.no_columns = True
        if planned.selects:
            selects = (*planned.selects, *(quoted(c) for c in (typed or {}).values()))
            # kept with the frame it is made of, when that is kept (a projection costs a
            # warm query more planning than its own analysis)
            frame = kept.derived(frame, "\n".join(selects), partial(frame.selectExpr, *selects))
        plan.frames[n] = frame


def _spell_out_visible_star(node: exp.Table, planned: PlannedScan, always: bool) -> bool:
    """The ``*`` spelled out as the table's own columns where the scan delivers implicit
    columns the query names (Drill's ``*`` does not show them), or ``always`` (the frame may
    deliver more columns after the table's); whether it was."""
    sources = planned.spec.sources
    names = planned.schema.names()
    if always or any(sources.get(n) in ColumnSource.IMPLICIT for n in names):
        visible = [n for n in names if sources.get(n) not in ColumnSource.IMPLICIT]
        return spell_out_star(node, table_alias(node), visible)
    return False


def _local_answer(
    spark: Any,
    planned: PlannedScan,
    options: Mapping[str, Any],
    reports: list[ScanReport] | None,
    rows_only: bool = False,
) -> Any:
    limit = planned.spec.limit
    if limit is None:
        table = whole_answer_table(planned, options, reports)
    else:
        table = local_limit_table(planned, options, reports)
        if table is not None:
            # sliced while it has a column: pyarrow slices a table of no columns to the length
            # asked for, whatever it held (an empty file's ``SELECT * ... LIMIT 5`` was five
            # empty rows)
            table = table.slice(0, limit)
    if table is None:
        return None
    if rows_only:  # only the rows' count was scanned: the answer has no columns
        table = table.drop_columns([ROW_COUNT_COLUMN])
        planned = replace(planned, schema=TupleSchema())
    spark_schema = schema_to_spark(planned.schema)
    table = spark_result_table(table, spark_schema, spark)
    return LocalAnswer(table, spark_schema)
