"""Counting rows without shipping them: ``SELECT COUNT(*) FROM t`` sends one row per batch.

Spark's Python data source hands the JVM every row, so a ``COUNT(*)`` over a text or JSON table
moves millions of empty rows across just to count them. When a query reads no column of the
table's data (only implicit and partition columns, which are constant within a file) and its
only aggregates are ``COUNT(*)`` / ``COUNT(<literal>)``, each scan batch can travel as one row
carrying how many rows it stands for, and ``COUNT(*)`` becomes the sum of those weights
(``COALESCE`` keeps an empty table at 0, as ``COUNT`` does). Filters and groups on the
implicit columns stay exact: every row of a batch has the same values for them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from sqlglot import exp

from auger.scan.plan import ROW_COUNT_COLUMN
from auger.scan.spec import ColumnSource
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

if TYPE_CHECKING:
    from auger.scan.plan import PlannedScan

__all__ = ["ROWS_COLUMN", "count_rows_query", "counting_scan", "sum_row_weights"]

#: The weight column: how many rows of the file one scan row stands for.
ROWS_COLUMN = "__auger_rows"

_PER_ROW = (exp.Subquery, exp.Window, exp.Join, exp.Lateral, exp.Explode, exp.Unnest)


def count_rows_query(tree: exp.Expression, n_tables: int) -> bool:
    """Whether the query's only use of the rows is counting them (see the module docstring)."""
    if n_tables != 1 or not isinstance(tree, exp.Select) or tree.args.get("distinct"):
        return False
    if tree.find(*_PER_ROW) is not None or tree.args.get("joins"):
        return False
    aggregates = list(tree.find_all(exp.AggFunc))
    if not aggregates:
        return False
    for agg in aggregates:
        if not isinstance(agg, exp.Count) or agg.args.get("expressions"):
            return False
        arg = agg.this
        if isinstance(arg, exp.Star):
            continue
        if isinstance(arg, exp.Literal) and not arg.is_string:
            continue
        return False
    return True


def counting_scan(planned: PlannedScan) -> PlannedScan | None:
    """The planned scan with the weight column, or None when it reads table data."""
    spec = planned.spec
    if spec.format_type == "parquet":
        return None  # Parquet counts from footers or natively (auger.spark.native_parquet)
    if any(src in (ColumnSource.TABLE, ColumnSource.MISSING) for src in spec.sources.values()):
        return None
    schema = TupleSchema(c for c in planned.schema if c.name != ROW_COUNT_COLUMN)
    schema.add(ColumnMetadata(ROWS_COLUMN, MinorType.BIGINT, DataMode.OPTIONAL))
    sources = {k: v for k, v in spec.sources.items() if k != ROW_COUNT_COLUMN}
    sources[ROWS_COLUMN] = ColumnSource.ROWS
    new_spec = replace(spec, output_schema=schema.to_text(), sources=sources)
    return replace(planned, spec=new_spec, schema=schema)


def sum_row_weights(tree: exp.Expression) -> exp.Expression:
    """``COUNT(*)`` → ``COALESCE(SUM(__auger_rows), 0)`` everywhere in the query."""

    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Count):
            total = exp.Sum(this=exp.column(ROWS_COLUMN))
            return exp.Coalesce(this=total, expressions=[exp.Literal.number(0)])
        return node

    return tree.transform(fix)
