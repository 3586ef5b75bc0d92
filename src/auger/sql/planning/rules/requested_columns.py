"""Rule: which columns each table must deliver."""

from __future__ import annotations

from sqlglot import exp

from auger.projection import path_segment
from auger.scan.plan import Requested
from auger.sql.planning.columns import (
    DIV_TAG,
    KVGEN_TAG,
    TABLE_TAG,
    TO_CHAR_TAG,
    analyse_columns,
    column_path,
)
from auger.sql.planning.select_plan import SelectPlan

__all__ = ["requested_columns"]


def requested_columns(plan: SelectPlan) -> None:
    """The query qualified against the tables' columns (:mod:`auger.sql.planning.columns`);
    where it cannot be, Drill's coarse rule: every unqualified name for every table."""
    tree = plan.tree
    for n, node in enumerate(plan.tables):
        node.meta[TABLE_TAG] = n
    for k, div in enumerate(tree.find_all(exp.Div)):
        div.meta[DIV_TAG] = k
    for k, fn in enumerate(tree.find_all(exp.Anonymous)):
        if fn.name.upper() == "KVGEN":
            fn.meta[KVGEN_TAG] = k
    for k, to_char in enumerate(tree.find_all(exp.TimeToStr)):
        to_char.meta[TO_CHAR_TAG] = k
    plan.analysis = analyse_columns(tree, plan.names, plan.schemas)
    if plan.analysis is None:
        requested = _analyse(tree, plan.tables)
        plan.defined = _defined_names(tree)
        plan.coarse = {id(t): requested[id(t)] for t in plan.tables}


def _defined_names(tree: exp.Expression) -> set[str]:
    """Names the query itself defines: select aliases, CTE names, derived-table columns."""
    names: set[str] = set()
    for alias in tree.find_all(exp.Alias):
        names.add(alias.alias.lower())
    for cte in tree.find_all(exp.CTE):
        names.add(cte.alias.lower())
    for ta in tree.find_all(exp.TableAlias):
        names.add(ta.name.lower())
        for col in ta.columns:
            names.add(col.name.lower())
    return names


def _analyse(tree: exp.Expression, tables: list[exp.Table]) -> dict[int, Requested]:
    """Which columns each table must deliver (an over-approximation is harmless)."""
    by_name: dict[str, exp.Table] = {}
    for t in tables:
        by_name.setdefault((t.alias_or_name or t.name).lower(), t)
        by_name.setdefault(t.name.lower(), t)
    req: dict[int, Requested] = {id(t): Requested() for t in tables}

    for star in tree.find_all(exp.Star):
        parent = star.parent
        if isinstance(parent, exp.Column) and parent.table:
            target = by_name.get(parent.table.lower())
            if target is not None:
                req[id(target)].star = True
            continue
        if isinstance(parent, exp.Select | exp.Column):
            for t in tables:
                req[id(t)].star = True
    for col in tree.find_all(exp.Column):
        if isinstance(col.this, exp.Star):
            continue
        parts = [p.name for p in col.parts]
        target = None
        if len(parts) > 1 and parts[0].lower() in by_name:
            target = by_name[parts[0].lower()]
            parts = parts[1:]
        root = parts[0]
        if target is not None:
            # the member path too (``t.nope.x``): a map no file has is planned with its members
            path = [*map(path_segment, parts[:-1]), column_path(col)[1]]
            req[id(target)].add(root, ".".join(path))
        else:
            for t in tables:
                req[id(t)].add(root)
    return req
