"""Rule: a query grouped by a cached string column of few values groups by the column's codes.

Spark's hash aggregate hashes and compares a string key byte by byte; a number it hashes at
once. Over 6.5 M rows cached from 300 MB of CSV, ``SELECT category, COUNT(*), SUM(amount) ...
GROUP BY category`` (20 values) took 0.30 s in Spark grouped by the strings and 0.22 s grouped
by an integer column of as many values. The raw-file cache keeps, beside a string column of
few values, a ``key`` copy: each value's code (:mod:`auger.scan.cache_typed`), and the scan
frame delivers it where every part has one, with each value and its code in the column's
metadata (:data:`~auger.scan.cache_typed.KEYS_METADATA`). Then

    SELECT category AS category, COUNT(*) ... GROUP BY category

is run as

    SELECT try_element_at(map(<code>, '<value>', ...), key) AS category, COUNT(*) ...
    GROUP BY key

where ``key`` is the frame's column of codes: the groups are the same (a code is one value's
alone), and each group's string is its code's. Only the grouping and what is evaluated once a
group changes: the column stays as it is in ``WHERE`` and in aggregates' arguments. The rule
leaves a query alone where a name in ``HAVING`` or ``ORDER BY`` could mean a select alias (Spark
resolves it to the alias first), and where windows or grouping sets see the groups otherwise.
``SELECT DISTINCT`` of columns alone is the ``GROUP BY`` of them, and is run as one when it
groups by codes. ``COUNT(DISTINCT category)``, grouped or not, counts the codes: as many as
the values (0.50 s to 0.30 s over the same rows).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from auger.scan.cache_typed import KEY_TARGET, KEYS_METADATA, typed_column
from auger.sql.planning.typed_casts import (
    is_table_column,
    may_read_typed,
    other_aliases,
    table_name,
)

__all__ = ["group_by_keys"]


def group_by_keys(tree: exp.Expression, schema: Callable[[], Any]) -> exp.Expression:
    """``GROUP BY`` a string column → ``GROUP BY`` its codes, and ``COUNT(DISTINCT`` it ``)``
    → ``COUNT(DISTINCT`` its codes ``)``, where the one table's frame (``schema``: its Spark
    ``StructType``, asked only for a query that could qualify) delivers them (see the module).
    Runs on the Spark tree, after Drill's output names are set and the raw-file cache's typed
    casts are read."""
    if not may_read_typed(tree):
        return tree
    group = tree.args.get("group")
    if group is None:
        group = _distinct_as_group(tree)
    if group is not None and any(
        group.args.get(k) for k in ("rollup", "cube", "grouping_sets", "totals")
    ):
        return tree
    if tree.find(exp.Window) is not None:
        return tree
    table = table_name(tree)
    grouped = set()
    if group is not None:
        grouped = {key.name.lower() for key in group.expressions if is_table_column(key, table)}
    counted = {node.name.lower() for node in tree.find_all(exp.Column) if _counted(node, table)}
    if not grouped and not counted:
        return tree
    fields = {f.name.lower(): f for f in schema().fields}
    codes: dict[str, tuple[str, exp.Expression]] = {}  # column -> (key column, its lookup)
    for column in grouped | counted:
        field = fields.get(typed_column(column, KEY_TARGET).lower())
        source = fields.get(column)
        if field is None or source is None or not field.metadata.get(KEYS_METADATA):
            continue
        pairs = json.loads(field.metadata[KEYS_METADATA])
        codes[column] = (field.name, _lookup(field.name, pairs, source.nullable))
    # in HAVING and ORDER BY, such a column's name could be a select alias
    if not codes or other_aliases(tree) & set(codes):
        return tree
    if group is not None and tree.args.get("group") is not group and grouped & set(codes):
        # SELECT DISTINCT, grouped by its select list
        tree.set("distinct", None)
        tree.set("group", group)
    group = tree.args.get("group")
    for node in list(tree.find_all(exp.Column)):
        name = node.name.lower()
        if name not in codes or not is_table_column(node, table):
            continue
        key, lookup = codes[name]
        if (group is not None and node.parent is group) or _counted(node, table):
            node.replace(exp.column(exp.to_identifier(key, quoted=True)))
        elif name in grouped and _after_grouping(node, tree):
            out = lookup.copy()
            if node.parent is tree and node.arg_key == "expressions":  # keeps its output name
                node.replace(exp.alias_(out, exp.to_identifier(node.name, quoted=True)))
            else:
                node.replace(out)
    return tree


def _counted(node: exp.Expression, table: str | None) -> bool:
    """Whether ``node`` is a column of the table counted as ``COUNT(DISTINCT`` it ``, ...)``:
    its distinct values are its codes' distinct values (a code is one value's alone, and NULL
    stays NULL), so the count is the same."""
    distinct = node.parent
    return (
        isinstance(node, exp.Column)
        and is_table_column(node, table)
        and isinstance(distinct, exp.Distinct)
        and node.arg_key == "expressions"
        and isinstance(distinct.parent, exp.Count)
        and distinct.arg_key == "this"
    )


def _distinct_as_group(tree: exp.Expression) -> exp.Group | None:
    """The ``GROUP BY`` that ``SELECT DISTINCT`` of columns alone is (Spark runs it as one),
    not set on the tree; None for any other query."""
    distinct = tree.args.get("distinct")
    if distinct is None or distinct.args.get("on") is not None or tree.find(exp.AggFunc):
        return None
    columns = [item.this if isinstance(item, exp.Alias) else item for item in tree.expressions]
    if not columns or not all(isinstance(c, exp.Column) for c in columns):
        return None
    return exp.Group(expressions=[c.copy() for c in columns])


def _lookup(key: str, pairs: list[list[Any]], nullable: bool) -> exp.Expression:
    """The string of a group by its code: ``try_element_at(map(code, 'value', ...), key)``
    (NULL for NULL), never NULL where the column never is."""
    entries: list[exp.Expression] = []
    for code, value in pairs:
        entries += [exp.Literal.number(int(code)), exp.Literal.string(str(value))]
    found: exp.Expression = exp.Anonymous(
        this="try_element_at",
        expressions=[
            exp.Anonymous(this="map", expressions=entries),
            exp.column(exp.to_identifier(key, quoted=True)),
        ],
    )
    if not nullable:  # every row has a code, and every code its value
        found = exp.Coalesce(this=found, expressions=[exp.Literal.string("")])
    return found


def _after_grouping(node: exp.Expression, tree: exp.Expression) -> bool:
    """Whether ``node`` is evaluated once a group (the select list, ``HAVING``, ``ORDER BY``)
    rather than for each row (``WHERE``, an aggregate's arguments)."""
    parent = node.parent
    while parent is not None and parent is not tree:
        if isinstance(parent, exp.AggFunc | exp.Where | exp.Group):
            return False
        parent = parent.parent
    return parent is tree
