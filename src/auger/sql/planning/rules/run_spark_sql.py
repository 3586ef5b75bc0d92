"""Rule: the query as Spark SQL, run over the tables' DataFrames; its result is the answer."""

from __future__ import annotations

import functools
from typing import Any

import pyarrow as pa
from sqlglot import exp

from auger.spark.errors import unwrap_spark_error
from auger.spark.frame_sql import sql_over_frames
from auger.spark.plan_tree import parquet_bytes
from auger.sql.frontend.translate import to_spark_sql
from auger.sql.planning.ascii_lengths import count_ascii_bytes
from auger.sql.planning.compact_columns import read_positions_directly
from auger.sql.planning.extreme_bounds import bound_extremes, frame_sample
from auger.sql.planning.few_groups import hash_string_extremes
from auger.sql.planning.group_keys import group_by_keys
from auger.sql.planning.local_answer import LocalAnswer
from auger.sql.planning.select_plan import SelectPlan
from auger.sql.planning.top_rows import MIN_BYTES, bound_first_rows
from auger.sql.planning.typed_casts import read_typed_casts

__all__ = ["run_spark_sql"]


def run_spark_sql(plan: SelectPlan) -> None:
    """``SparkSession.sql`` with the DataFrames as its tables (nothing is registered in Spark's
    catalog); the answer is the lazy DataFrame, or rows of no columns counted here."""
    sql = to_spark_sql(plan.tree, functools.partial(_finish, plan))
    frames = {plan.names[n]: plan.frames[n] for n in range(len(plan.tables))}
    try:
        # a kept frame is named by its view (see auger.spark.kept_frames), kept while the
        # query is analysed
        kept = plan.statement.engine.kept_frames
        with kept.views_of(frames) as views:
            # a query that runs now over kept small reads may run a plan made before
            # (see auger.spark.plan_reuse); one that counts rows here runs no plan
            plans = kept.reusable_plans(views) if plan.local and not plan.no_columns else None
            frame = sql_over_frames(plan.spark, sql, frames, views, plans)
        if plan.local and plan.no_columns and not frame.columns:
            # Arrow batches without columns carry no row count, so Spark would ship no
            # rows: they are counted here and answered as rows of no columns
            plan.answer = LocalAnswer(_no_columns(frame.count()), frame.schema)
        else:
            plan.answer = frame
    except Exception as exc:
        raise unwrap_spark_error(exc, plan.statement.sql) from exc


def _finish(plan: SelectPlan, tree: exp.Expression) -> exp.Expression:
    """The Spark tree reading what the one table's frame delivers ready: ``columns[n]`` as
    its own column, then casts to numbers or dates from the raw-file cache's typed copies; the
    rows of a text MIN or MAX that cannot hold an extreme filtered out, and such an aggregate
    over few groups kept off Spark's sort, the LENGTH of ASCII text
    counted in bytes, a string column of few values grouped by its codes; last, the first rows
    of a sorted query found by their key before their other columns are read."""
    if len(plan.tables) != 1:
        return tree
    if 0 in plan.direct_positions:
        tree = read_positions_directly(tree, plan.direct_positions[0])
    tree = read_typed_casts(tree, plan.typed_casts.get(0, {}))
    tree = bound_extremes(tree, lambda: plan.frames[0].schema, frame_sample(plan.frames[0]))
    tree = hash_string_extremes(tree, lambda: plan.frames[0].schema)
    tree = count_ascii_bytes(tree, lambda: plan.frames[0].schema)
    tree = group_by_keys(tree, lambda: plan.frames[0].schema)
    return bound_first_rows(tree, lambda: (parquet_bytes(plan.frames[0]) or -1) >= MIN_BYTES)


def _no_columns(rows: int) -> Any:
    """An Arrow table of ``rows`` rows and no columns."""
    return pa.table({"rows": pa.nulls(rows)}).drop_columns(["rows"])
