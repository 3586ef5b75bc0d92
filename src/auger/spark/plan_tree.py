"""Spark's plans of a DataFrame as trees of plain values, for EXPLAIN and the query profile.

Each node keeps what a reader of the plan needs and no JVM handle: Spark's node name, its
expressions as SQL text, its output columns with their expression ids (the ids are what tie a
scan node back to the DataFrame the planner built for a table: Spark keeps a relation's
attribute ids from the analysed plan through optimisation to the physical scan), its
children, and the rows and time Spark measured for it (read after the query ran, the physical
plan is the one adaptive execution settled on, with its metrics filled in). Spark's own
wrappers that add nothing a user sees (whole-stage code generation, adaptive execution's
shell, row/columnar conversions) are passed through.

Under Spark Connect there is no JVM handle to walk: the functions answer None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

__all__ = [
    "ParquetLineage",
    "PlanNode",
    "logical_tree",
    "output_ids",
    "parquet_bytes",
    "parquet_lineage",
    "physical_tree",
    "read_ids",
]

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
        "Coalesce",  # the rows of small files read on the driver, kept in one partition
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
        rows: the rows Spark counted out of the node (None where it counts none).
        time_ms: the milliseconds Spark's timing metrics of the node add up to (None where it
            has none).
    """

    name: str
    detail: str
    expressions: tuple[str, ...]
    output: tuple[tuple[str, int], ...]
    children: tuple[PlanNode, ...]
    rows: int | None = None
    time_ms: float | None = None


def _seq(jseq: Any) -> list[Any]:
    return [jseq.apply(i) for i in range(jseq.size())]


def _expression_sql(expr: Any) -> str:
    try:
        if expr.nodeName() == "Alias":
            expr = expr.child()
        return str(expr.sql())
    except Exception:  # an expression without a SQL form (a subquery's plan): Spark's text
        return str(expr.toString())


def _metrics(jnode: Any) -> tuple[int | None, float | None]:
    """The node's output rows and its time in milliseconds, where Spark measures them."""
    rows: int | None = None
    time_ms, timed = 0.0, False
    try:
        it = jnode.metrics().iterator()
        while it.hasNext():
            pair = it.next()
            key, metric = str(pair._1()), pair._2()
            kind = str(metric.metricType())
            if key == "numOutputRows":
                rows = int(metric.value())
            elif kind == "timing":
                time_ms += int(metric.value())
                timed = True
            elif kind == "nsTiming":
                time_ms += int(metric.value()) / 1e6
                timed = True
    except Exception:  # metrics Spark cannot give: the node keeps none
        return None, None
    return rows, (round(time_ms, 1) if timed else None)


def _node(jnode: Any, physical: bool = True) -> PlanNode:
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
    children = tuple(_node(c, physical) for c in _seq(jnode.children()))
    rows, time_ms = _metrics(jnode) if physical else (None, None)
    return PlanNode(name, detail, exprs, output, children, rows, time_ms)


def _query_execution(df: Any) -> Any | None:
    jdf = getattr(df, "_jdf", None)  # a classic DataFrame; Spark Connect's has none
    return None if jdf is None else jdf.queryExecution()


def physical_tree(df: Any) -> PlanNode | None:
    """The physical plan Spark would run for ``df`` (after it ran: the plan that ran, with the
    rows and time Spark measured)."""
    qe = _query_execution(df)
    return None if qe is None else _node(qe.executedPlan())


def logical_tree(df: Any) -> PlanNode | None:
    """The optimised logical plan of ``df``."""
    qe = _query_execution(df)
    return None if qe is None else _node(qe.optimizedPlan(), physical=False)


def output_ids(df: Any) -> tuple[int, ...] | None:
    """The expression ids of ``df``'s output columns, in order."""
    qe = _query_execution(df)
    if qe is None:
        return None
    return tuple(_ids(qe.analyzed()))


def read_ids(df: Any) -> tuple[int, ...] | None:
    """The expression ids of ``df``'s output columns, then those of the relations it reads.

    A DataFrame that builds its columns from what it reads (the raw-file cache's frame, whose
    ``columns`` array or casts are made of the entries' own columns) gives its output new ids:
    once Spark has pushed such a projection into the query, the physical scan outputs only the
    relation's columns, and those ids are what tie it back to the DataFrame."""
    qe = _query_execution(df)
    if qe is None:
        return None
    analyzed = qe.analyzed()
    ids = _ids(analyzed)
    for leaf in _seq(analyzed.collectLeaves()):
        ids += _ids(leaf)
    return tuple(dict.fromkeys(ids))


def _ids(plan: Any) -> list[int]:
    """The expression ids of a (JVM) plan's output columns, in order."""
    return [int(a.exprId().id()) for a in _seq(plan.output())]


#: What a frame read again cheaply may be made of over its Parquet files: no join, aggregate
#: or sort, which a second read would run again.
_READ_AGAIN = frozenset({"Project", "Filter", "SubqueryAlias", "View", "LogicalRelation"})


def parquet_bytes(df: Any) -> int | None:
    """The bytes of the Parquet files ``df`` reads, where its plan is Spark's own reader of
    Parquet files (a Parquet table, the raw-file cache's entries) under projections and filters
    alone; None where it is anything else (a scan that parses files, rows held on the driver, a
    view that joins or groups) or cannot be told (Spark Connect's frames have no plan here)."""
    qe = _query_execution(df)
    if qe is None:
        return None
    try:
        total = 0
        nodes = [qe.analyzed()]
        while nodes:
            node = nodes.pop()
            kind = _kind(node)
            if kind not in _READ_AGAIN:
                return None
            if kind == "LogicalRelation":
                relation = node.relation()
                if relation.fileFormat().toString() != "Parquet":
                    return None
                total += int(relation.sizeInBytes())
            nodes.extend(_seq(node.children()))
        return total
    except Exception:  # a plan of another shape
        return None


@dataclass(frozen=True)
class ParquetLineage:
    """Where columns of a frame, or members of its structs, come from in the Parquet files it
    reads.

    Attributes:
        files: the local paths of the files, in Spark's order.
        sources: each path asked for (a frame column, then members of its structs) → the
            files' column, the members of its structs it reads (by their names in the files),
            and the Spark type it is cast to (None: delivered as it is).
    """

    files: tuple[str, ...]
    sources: dict[tuple[str, ...], tuple[str, tuple[str, ...], str | None]]


def parquet_lineage(df: Any, paths: list[tuple[str, ...]]) -> ParquetLineage | None:
    """Which column of ``df``'s Parquet files (or member of its structs) each of ``paths`` is,
    read as it is or through a cast, by the optimised plan of ``df`` narrowed to those paths:
    one projection over Spark's Parquet reader of local files. A member Spark reads as NULL
    where its struct is (``CASE WHEN m IS NOT NULL THEN m.qty END``, as a frame that rebuilds
    a struct of the members it reads gives it) is that member. None for any other plan (a
    filter, a union, a value computed otherwise, a partition column, a file that is not
    local) or under Spark Connect."""
    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        return None
    try:
        cols = []
        for path in paths:
            col = df[f"`{path[0].replace('`', '``')}`"]
            for member in path[1:]:
                col = col[member]
            cols.append(col)
        node = df.select(*cols)._jdf.queryExecution().optimizedPlan()
        exprs = None
        if _kind(node) == "Project":
            exprs = _seq(node.projectList())
            node = node.child()
        if _kind(node) != "LogicalRelation":
            return None
        relation = node.relation()
        if relation.fileFormat().toString() != "Parquet":
            return None
        partitions = {str(f.name()) for f in _seq(relation.partitionSchema().toSeq())}
        if exprs is None:
            exprs = _seq(node.output())
        # the relation's own names: an attribute resolved in another case is named as asked
        named = {int(a.exprId().id()): str(a.name()) for a in _seq(node.output())}
        sources = {}
        for path, expr in zip(paths, exprs, strict=True):
            source = _source(expr, named)
            if source is None or source[0] in partitions:
                return None
            sources[path] = source
        files = []
        for uri in list(relation.location().inputFiles()):
            parsed = urlparse(str(uri))
            if parsed.scheme != "file":
                return None
            files.append(unquote(parsed.path))
        return ParquetLineage(tuple(files), sources)
    except Exception:  # a plan of another shape
        return None


def _source(expr: Any, named: dict[int, str]) -> tuple[str, tuple[str, ...], str | None] | None:
    """(column, members, cast type) of a (JVM) expression that reads a column of the relation
    (``named``: its columns' names by expression id), a member of its structs, or an integer
    cast of either; None for any other."""
    if _kind(expr) == "Alias":
        expr = expr.child()
    target = None
    if _kind(expr) == "Cast":
        target = str(expr.dataType().simpleString())
        expr = expr.child()
    read = _read(expr, named)
    return None if read is None else (read[0], read[1], target)


def _read(expr: Any, named: dict[int, str]) -> tuple[str, tuple[str, ...]] | None:
    """(column, members) of a (JVM) expression that reads a column or a member of its structs
    (NULL where a struct on the way is); None for any other."""
    kind = _kind(expr)
    if kind == "AttributeReference":
        name = named.get(int(expr.exprId().id()))
        return None if name is None else (name, ())
    if kind == "GetStructField":
        inner = _read(expr.child(), named)
        return None if inner is None else (inner[0], (*inner[1], str(expr.extractFieldName())))
    if kind == "CaseWhen":
        branches = _seq(expr.branches())
        other = expr.elseValue()
        if len(branches) != 1 or (other.isDefined() and not _is_null(other.get())):
            return None
        when, then = branches[0]._1(), branches[0]._2()
        if _kind(when) != "IsNotNull":
            return None
        struct, value = _read(when.child(), named), _read(then, named)
        if struct is None or value is None or struct[0] != value[0]:
            return None
        # NULL where a struct on the member's way is NULL, as the member is anyway
        return value if value[1][: len(struct[1])] == struct[1] else None
    return None


def _kind(expr: Any) -> str:
    return str(expr.getClass().getSimpleName())


def _is_null(expr: Any) -> bool:
    return _kind(expr) == "Literal" and expr.value() is None
