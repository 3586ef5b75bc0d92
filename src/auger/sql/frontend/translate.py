"""Drill SQL → Spark SQL for a query whose tables are already Spark views.

The planner's last step, also usable alone (golden tests pin it: ``tests/golden/*.sql``): the
Drill→Spark rewrites of :mod:`auger.sql.frontend.rewrites`, integer division for two integers, and
Drill's output names.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types

from auger.sql.frontend.dialect import AugerDrill
from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.rewrites import REWRITES, drill_output_names

__all__ = ["drill_to_spark", "to_spark_sql"]

_INTEGERS = {
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
}


def literal_integer_divisions(tree: exp.Expression) -> exp.Expression:
    """``7 / 2`` → ``7 DIV 2`` where both sides are integers known without a schema."""
    annotated = annotate_types(tree.copy(), dialect=AugerDrill)
    tags = []
    for div in annotated.find_all(exp.Div):
        left, right = div.this.type, div.expression.type
        tags.append(
            left is not None
            and right is not None
            and left.this in _INTEGERS
            and right.this in _INTEGERS
        )
    divs = list(tree.find_all(exp.Div))
    for div, is_int in zip(divs, tags, strict=False):
        if is_int:
            div.replace(exp.IntDiv(this=div.this, expression=div.expression))
    return tree


def to_spark_sql(
    tree: exp.Expression, finish: Callable[[exp.Expression], exp.Expression] | None = None
) -> str:
    """Apply the rewrites and Drill's output names (then ``finish``), and generate Spark SQL.

    ``tree`` is left alone: the rewrites change one copy of it in place.
    """
    tree = tree.copy()
    for rule in REWRITES:
        tree = rule(tree)
    tree = drill_output_names(tree)
    if finish is not None:
        tree = finish(tree)
    return tree.sql(dialect="spark", copy=False)


def drill_to_spark(sql: str) -> str:
    """Translate one Drill query (its tables taken as Spark view names) to Spark SQL."""
    tree = parse_statement(sql)
    return to_spark_sql(literal_integer_divisions(tree))
