"""``EXPLAIN PLAN FOR``: the query's operator tree in Drill's layout, from the plan Spark made.

Drill answers two columns, ``text`` and ``json``. ``text`` is one operator a line, numbered
``fragment-operator`` and indented by depth::

    00-00    Screen
    00-01      Project(full_name=[full_name])
    00-02        Filter(condition=[(salary > 1000)])
    00-03          Scan(table=[cp.employee.json], numFiles=1, files=[employee.json], ...)

and ``json`` the same tree (``graph``, leaves first, each operator naming its ``child``).
``EXPLAIN PLAN WITHOUT IMPLEMENTATION FOR`` gives the logical plan instead (``DrillScreenRel``,
``DrillProjectRel``..., indented, no numbers) and its JSON (``query``).

The tree is Spark's (physical, or optimised logical), each operator under Drill's name where
Drill has one (a table of names below; others keep Spark's). Spark's node for a table names no
table (a Python data source scan is ``BatchScan``), so each scan the planner builds is recorded
while the query is planned, with the expression ids of its DataFrame's columns and of the
relations it reads (the raw-file cache's frame makes its columns of its entries' own); the plan
node whose output carries those ids is that scan, and is written with what auger planned for it:
the table, its files, the columns it reads, the filters Spark applies to its rows as they come
out, and the files partition pruning left out. Under Spark Connect the plan cannot be walked:
the tree is the Screen over the planned scans.

The query profile draws the same tree (:func:`plan_graph`), read after the query ran: each
operator then carries the rows and time Spark measured for it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from auger.scan.plan import PlannedScan, ScanTable
from auger.spark.plan_tree import PlanNode, logical_tree, output_ids, physical_tree, read_ids
from auger.sql.recordings import PlannedTableScan
from auger.sql.result import QueryResult

__all__ = [
    "PlannedTableScan",
    "explain_result",
    "plan_graph",
    "scan_framed",
    "table_framed",
]


def scan_framed(
    scans: list[PlannedTableScan] | None, found: ScanTable, planned: PlannedScan, frame: Any
) -> None:
    """Note a scan's DataFrame in ``scans``, the statement's list of planned scans (None when
    neither an EXPLAIN nor a query profile wants them: then nothing is asked of Spark)."""
    if scans is None:
        return
    ids = read_ids(frame) or ()
    scans.append(PlannedTableScan(found.label, ids, planned, len(found.selection.files)))


def table_framed(scans: list[PlannedTableScan] | None, table: str, frame: Any) -> None:
    """Note the DataFrame of a table that is no file scan (a system or temporary table)."""
    if scans is not None:
        scans.append(PlannedTableScan(table, output_ids(frame) or (), names=tuple(frame.columns)))


# ------------------------------------------------------------------ names
#: Spark's physical operators under Drill's names.
PHYSICAL_NAMES = {
    "Project": "Project",
    "Filter": "Filter",
    "HashAggregate": "HashAgg",
    "ObjectHashAggregate": "HashAgg",
    "SortAggregate": "StreamAgg",
    "Sort": "Sort",
    "TakeOrderedAndProject": "TopN",
    "CollectLimit": "Limit",
    "GlobalLimit": "Limit",
    "LocalLimit": "Limit",
    "BroadcastHashJoin": "HashJoin",
    "ShuffledHashJoin": "HashJoin",
    "SortMergeJoin": "MergeJoin",
    "BroadcastNestedLoopJoin": "NestedLoopJoin",
    "CartesianProduct": "NestedLoopJoin",
    "BroadcastExchange": "BroadcastExchange",
    "Union": "UnionAll",
    "Window": "Window",
    "Generate": "Flatten",
    "LocalTableScan": "Values",
    "Range": "Values",
}

#: Spark's logical operators under Drill's names.
LOGICAL_NAMES = {
    "Project": "DrillProjectRel",
    "Filter": "DrillFilterRel",
    "Aggregate": "DrillAggregateRel",
    "Sort": "DrillSortRel",
    "GlobalLimit": "DrillLimitRel",
    "LocalLimit": "DrillLimitRel",
    "Join": "DrillJoinRel",
    "Union": "DrillUnionRel",
    "Window": "DrillWindowRel",
    "Generate": "DrillFlattenRel",
    "LocalRelation": "DrillValuesRel",
    "Range": "DrillValuesRel",
}

#: how Spark's shuffle partitions rows → Drill's exchange
_EXCHANGES = (
    ("hashpartitioning", "HashToRandomExchange"),
    ("rangepartitioning", "OrderedPartitionExchange"),
    ("SinglePartition", "UnionExchange"),
    ("roundrobinpartitioning", "UnorderedMuxExchange"),
)

#: Spark's internal ids in its plan text: expression ids (``a#12L``) and plan ids
_INTERNAL_IDS = re.compile(r"#\d+L?|,?\s*\[plan_id=\d+\]")


@dataclass
class _Op:
    """An operator as written: Drill's name, its arguments, its inputs, and the rows and
    milliseconds Spark measured for it (None where it measured none)."""

    name: str
    args: str
    fields: dict[str, Any]
    children: list[_Op]
    rows: int | None = None
    time_ms: float | None = None


def _clean(text: str) -> str:
    """Spark's text without its internal ids, and without the parentheses around it all."""
    text = _INTERNAL_IDS.sub("", text).strip()
    if text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _scan_of(node: PlanNode, scans: list[PlannedTableScan], used: set[int]) -> int | None:
    """The recorded scan whose columns the node outputs (by expression id), else one whose
    column names it outputs (Spark gives a table read twice, as in a self-join, fresh ids, and
    folds a filter over a small in-memory table, such as a system table's, into new rows)."""
    if node.children:
        return None
    ids = {i for _, i in node.output}
    best, overlap = None, 0
    for k, scan in enumerate(scans):
        common = len(ids & set(scan.ids))
        if k not in used and common > overlap:
            best, overlap = k, common
    if best is not None:
        return best
    names = [n.lower() for n, _ in node.output]
    for k, scan in enumerate(scans):
        if k in used or not names:
            continue
        if scan.planned is not None:
            if names == [n.lower() for n in scan.planned.schema.names()]:
                return k
        elif set(names) <= {n.lower() for n in scan.names}:
            return k
    return None


def _scan_op(scan: PlannedTableScan, name: str, filters: list[str]) -> _Op:
    if scan.planned is None:
        where = f", filters=[{' AND '.join(filters)}]" if filters else ""
        return _Op(
            name, f"table=[{scan.table}]{where}", {"table": scan.table, "filters": filters}, []
        )
    spec = scan.planned.spec
    files = list(dict.fromkeys(f.path for f in spec.files))
    # relative to the selection root: two ``q1.csv`` of different directories stay two names
    root = spec.selection_root.rstrip("/") + "/"
    shown = [
        f[len(root) :] if f.startswith(root) else f.rstrip("/").rsplit("/", 1)[-1]
        for f in files[:5]
    ]
    shown += ["..."] if files[5:] else []
    columns = [f"`{c}`" for c in scan.planned.schema.names()]
    fields: dict[str, Any] = {
        "table": scan.table,
        "selectionRoot": spec.selection_root,
        "format": spec.format_name,
        "numFiles": len(files),
        "files": files,
        "columns": columns,
        "filters": filters,
        "prunedFiles": scan.listed - len(files),
        "listedFiles": scan.listed,
    }
    args = [
        f"table=[{scan.table}]",
        f"selectionRoot={spec.selection_root}",
        f"numFiles={len(files)}",
        f"files=[{', '.join(shown)}]",
        f"columns=[{', '.join(columns)}]",
    ]
    if filters:
        args.append(f"filters=[{' AND '.join(filters)}]")
    if scan.listed > len(files):
        args.append(f"partitions pruned=[{scan.listed - len(files)} of {scan.listed} files]")
    if spec.limit is not None:
        args.append(f"limit={spec.limit}")
    return _Op(name, ", ".join(args), fields, [])


def _args(node: PlanNode, drill: str) -> str:
    if drill in ("Project", "DrillProjectRel") and len(node.expressions) == len(node.output):
        return ", ".join(
            f"{name}=[{_clean(expr)}]"
            for (name, _), expr in zip(node.output, node.expressions, strict=True)
        )
    if drill in ("Filter", "DrillFilterRel") and node.expressions:
        return f"condition=[{_clean(node.expressions[0])}]"
    if drill in ("Limit", "DrillLimitRel"):
        m = re.search(r"\d+", node.detail)
        return f"fetch=[{m.group(0)}]" if m else _clean(node.detail)
    return _clean(node.detail)


def _convert(
    node: PlanNode,
    names: dict[str, str],
    scans: list[PlannedTableScan],
    used: set[int],
    scan_name: str,
    filters: list[str],
) -> _Op:
    k = _scan_of(node, scans, used)
    if k is not None:
        used.add(k)
        op = _scan_op(scans[k], scan_name, filters)
        op.rows, op.time_ms = node.rows, node.time_ms
        return op
    drill = names.get(node.name, node.name)
    if not node.children and node.name.startswith("Scan OneRowRelation"):
        drill = names.get("Range", drill)  # ``FROM (VALUES(1))`` and no FROM: one row of values
    if node.name == "Exchange":
        drill = next((d for key, d in _EXCHANGES if key in node.detail), "Exchange")
    # the conditions of a Filter right over a scan are the ones Spark offered the scan
    below = [_clean(e) for e in node.expressions] if drill in ("Filter", "DrillFilterRel") else []
    children = [_convert(c, names, scans, used, scan_name, below) for c in node.children]
    # Spark plans a limit twice (per partition, then overall): Drill shows one
    if (
        drill in ("Limit", "DrillLimitRel")
        and len(children) == 1
        and children[0].name == drill
        and children[0].args == _args(node, drill)
    ):
        children = children[0].children
    fields = {"detail": _clean(node.detail)}
    return _Op(drill, _args(node, drill), fields, children, node.rows, node.time_ms)


def _pop(name: str) -> str:
    """``HashAgg`` → ``hash-agg``, ``DrillProjectRel`` → ``project``."""
    bare = name.removeprefix("Drill").removesuffix("Rel")
    return re.sub(r"(?<!^)(?=[A-Z])", "-", bare).lower()


def _physical(root: _Op) -> tuple[str, str]:
    lines: list[str] = []
    graph: list[dict[str, Any]] = []

    def walk(op: _Op, depth: int) -> int:
        number = len(lines)
        text = f"{op.name}({op.args})" if op.args else op.name
        lines.append(f"00-{number:02d}{' ' * (4 + 2 * depth)}{text}")
        kids = [walk(c, depth + 1) for c in op.children]
        entry: dict[str, Any] = {"pop": "fs-scan" if op.name == "Scan" else _pop(op.name)}
        entry["@id"] = number
        if len(kids) == 1:
            entry["child"] = kids[0]
        elif kids:
            entry["children"] = kids
        entry.update(op.fields)
        graph.append(entry)
        return number

    walk(root, 0)
    head = {"version": 1, "generator": {"type": "ExplainHandler", "info": ""}}
    plan = {"head": {**head, "type": "APACHE_DRILL_PHYSICAL"}, "graph": graph}
    return "\n".join(lines) + "\n", json.dumps(plan, indent=2)


def _logical(root: _Op) -> tuple[str, str]:
    lines: list[str] = []
    query: list[dict[str, Any]] = []
    ids = iter(range(1, 1 << 30))

    def walk(op: _Op, depth: int) -> int:
        text = f"{op.name}({op.args})" if op.args else op.name
        lines.append("  " * depth + text)
        kids = [walk(c, depth + 1) for c in op.children]
        entry: dict[str, Any] = {"op": "scan" if op.name == "DrillScanRel" else _pop(op.name)}
        entry["@id"] = next(ids)
        if len(kids) == 1:
            entry["input"] = kids[0]
        elif kids:
            entry["inputs"] = kids
        entry.update(op.fields)
        query.append(entry)
        return int(entry["@id"])

    walk(root, 0)
    head = {"version": 1, "generator": {"type": "ExplainHandler", "info": ""}}
    plan = {"head": {**head, "type": "APACHE_DRILL_LOGICAL"}, "query": query}
    return "\n".join(lines) + "\n", json.dumps(plan, indent=2)


def _operator_tree(frame: Any, scans: list[PlannedTableScan], with_implementation: bool) -> _Op:
    """The query's operators under Drill's names, the Screen at the root (see the module)."""
    used: set[int] = set()
    if with_implementation:
        tree = physical_tree(frame)
        names, scan_name, screen = PHYSICAL_NAMES, "Scan", "Screen"
    else:
        tree = logical_tree(frame)
        names, scan_name, screen = LOGICAL_NAMES, "DrillScanRel", "DrillScreenRel"
    if tree is not None:
        top = [_convert(tree, names, scans, used, scan_name, [])]
    else:
        top = [_scan_op(s, scan_name, []) for s in scans]
    # the Screen hands the client what its input gave
    return _Op(screen, "", {}, top, top[0].rows if len(top) == 1 else None)


def explain_result(
    frame: Any, scans: list[PlannedTableScan], with_implementation: bool
) -> QueryResult:
    """Drill's EXPLAIN answer for the planned query ``frame`` (see the module)."""
    root = _operator_tree(frame, scans, with_implementation)
    text, plan = _physical(root) if with_implementation else _logical(root)
    return QueryResult(
        table=pa.table({"text": pa.array([text], pa.string()), "json": pa.array([plan])}),
        statement="EXPLAIN",
    )


def plan_graph(frame: Any, scans: list[PlannedTableScan]) -> dict[str, Any]:
    """The physical tree EXPLAIN gives for ``frame``, as the query profile keeps it: each
    operator ``{"name", "detail", "rows", "timeMs", "children"}``, ``detail`` the operator as
    EXPLAIN writes it, ``rows`` and ``timeMs`` what Spark measured (None where it measured
    nothing). Called after the rows were fetched, so the measures are in.

    Args:
        frame: the DataFrame that ran.
        scans: the scans recorded (:func:`scan_framed`, :func:`table_framed`) while it was
            planned.
    """

    def node(op: _Op) -> dict[str, Any]:
        return {
            "name": op.name,
            "detail": f"{op.name}({op.args})" if op.args else op.name,
            "rows": op.rows,
            "timeMs": op.time_ms,
            "children": [node(c) for c in op.children],
        }

    return node(_operator_tree(frame, scans, with_implementation=True))
