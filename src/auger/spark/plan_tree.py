"""Spark's plans of a DataFrame as trees of plain values, for EXPLAIN.

Each node keeps what a reader of the plan needs and no JVM handle: Spark's node name, its
expressions as SQL text, its output columns with their expression ids (the ids are what tie a
scan node back to the DataFrame the planner built for a table: Spark keeps a relation's
attribute ids from the analysed plan through optimisation to the physical scan), and its
children. Spark's own wrappers that add nothing a user sees (whole-stage code generation,
adaptive execution's shell, row/columnar conversions) are passed through.

Under Spark Connect there is no JVM handle to walk: the functions answer None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["PlanNode", "logical_tree", "output_ids", "physical_tree"]

#: nodes that only wrap their one child for Spark's own execution machinery
_PASS_THROUGH = frozenset(
    {
        "WholeStageCodegen",
        "InputAdapter",
        "ColumnarToRow",
        "RowToColumnar",
        "AQEShuffleRead",
        "ShuffleQueryStage",
        "BroadcastQueryStage",
        "ResultQueryStage",
    }
)


@dataclass(frozen=True)
class PlanNode:
    """One operator of a Spark plan.

    Attributes:
        name: Spark's node name (``Project``, ``Filter``, ``BatchScan``, ``HashAggregate``...).
        detail: Spark's one-line description of the node, without its name.
        expressions: the node's expressions as SQL (an alias as the expression it names).
        output: the node's output columns as (name, expression id).
        children: the node's inputs.
    """

    name: str
    detail: str
    expressions: tuple[str, ...]
    output: tuple[tuple[str, int], ...]
    children: tuple[PlanNode, ...]


def _seq(jseq: Any) -> list[Any]:
    return [jseq.apply(i) for i in range(jseq.size())]


def _expression_sql(expr: Any) -> str:
    try:
        if expr.nodeName() == "Alias":
            expr = expr.child()
        return str(expr.sql())
    except Exception:  # an expression without a SQL form (a subquery's plan): Spark's text
        return str(expr.toString())


def _node(jnode: Any) -> PlanNode:
    while True:
        # ``WholeStageCodegen (1)``: Spark numbers its code-generation stages in the name
        name = str(jnode.nodeName()).split(" (", 1)[0]
        if name == "AdaptiveSparkPlan":
            jnode = jnode.executedPlan()
        elif name in _PASS_THROUGH and jnode.children().size() == 1:
            jnode = jnode.children().apply(0)
        elif name in _PASS_THROUGH and name.endswith("QueryStage"):
            jnode = jnode.plan()
        else:
            break
    text = str(jnode.simpleString(25))
    full = str(jnode.nodeName())
    detail = text[len(full) :].strip() if text.startswith(full) else text
    try:
        exprs = tuple(_expression_sql(e) for e in _seq(jnode.expressions()))
    except Exception:
        exprs = ()
    output = tuple((str(a.name()), int(a.exprId().id())) for a in _seq(jnode.output()))
    children = tuple(_node(c) for c in _seq(jnode.children()))
    return PlanNode(name, detail, exprs, output, children)


def _query_execution(df: Any) -> Any | None:
    jdf = getattr(df, "_jdf", None)  # a classic DataFrame; Spark Connect's has none
    return None if jdf is None else jdf.queryExecution()


def physical_tree(df: Any) -> PlanNode | None:
    """The physical plan Spark would run for ``df``."""
    qe = _query_execution(df)
    return None if qe is None else _node(qe.executedPlan())


def logical_tree(df: Any) -> PlanNode | None:
    """The optimised logical plan of ``df``."""
    qe = _query_execution(df)
    return None if qe is None else _node(qe.optimizedPlan())


def output_ids(df: Any) -> tuple[int, ...] | None:
    """The expression ids of ``df``'s output columns, in order."""
    qe = _query_execution(df)
    if qe is None:
        return None
    return tuple(int(a.exprId().id()) for a in _seq(qe.analyzed().output()))
