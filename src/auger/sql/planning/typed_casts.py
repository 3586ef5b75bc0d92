"""A query's casts of a cached text column to a number or a date, read from the cache's typed
copies.

Over raw-file cache entries (:mod:`auger.scan.cache_typed`) a scan frame can deliver
``CAST(amount AS DOUBLE)`` itself, as a column read from the entries' typed copy where every
cached part has one, and as Spark's cast of the strings for the files parsed beside them
(:func:`auger.spark.cached_scan.cached_frame`). This module says where a query may take that
column in place of its own cast, and puts it there.

The frame column is the cast's value row for row, so the rewrite changes no answer. What it
can change is *when* a file parsed beside the entries is cast: in the frame, for every row
that reaches the query's expressions, rather than where the query's expression evaluates it.
So a cast is taken from the frame only where the query would cast every such row anyway: not
under a conditional (``CASE``, ``IF``, ``COALESCE``, ``NULLIF``, ``AND``, ``OR``, ``TRY``,
``TRY_CAST``, an aggregate's ``FILTER``, a lambda), nor under a function auger does not know;
and only in a query of one SELECT over the one table. In ``ORDER BY`` and ``HAVING``, where
Spark resolves a name to a select alias before the table's column, a cast of a name that is
also an alias stays. A cast is replaced everywhere in the query or nowhere, so that what
Spark matches with the ``GROUP BY`` expressions still matches (see :func:`read_typed_casts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeGuard

from sqlglot import exp

__all__ = [
    "is_table_column",
    "may_read_typed",
    "other_aliases",
    "read_typed_casts",
    "table_name",
]

#: Where a cast may stand (between it and the SELECT) to be read from the frame: nodes that
#: evaluate all their operands.
_EVERY_ROW: tuple[type, ...] = (
    exp.Alias,
    exp.Paren,
    exp.Neg,
    exp.Not,
    exp.Distinct,
    exp.Ordered,
    exp.Order,
    exp.Group,
    exp.Where,
    exp.Having,
    exp.Select,
    exp.AggFunc,
    exp.Window,
    exp.Binary,
    exp.Func,
)

#: Nodes that evaluate an operand only for some rows, or hide its errors.
_SOME_ROWS: tuple[type, ...] = (
    exp.Connector,  # AND, OR
    exp.Case,
    exp.If,
    exp.Coalesce,
    exp.Nullif,
    exp.Try,
    exp.Filter,
    exp.Lambda,
    exp.Anonymous,  # a function auger does not know
)


def may_read_typed(tree: exp.Expression) -> bool:
    """Whether the query is one SELECT over one table, where a column name can only mean the
    table's column (no subquery, CTE, join, set operation or lateral view)."""
    if not isinstance(tree, exp.Select):
        return False
    return tree.find(exp.Subquery, exp.With, exp.Lateral, exp.SetOperation, exp.Join) is None


def table_name(tree: exp.Expression) -> str | None:
    """The alias (or name) of the query's one table, lower-cased."""
    source = tree.args.get("from_")
    this = source.this if source is not None else None
    return this.alias_or_name.lower() if isinstance(this, exp.Table) else None


def is_table_column(node: exp.Expression, table: str | None) -> bool:
    """A column of the table itself: unqualified or qualified by the table (``m.a`` with ``m``
    a map column is a member, not a column)."""
    if not isinstance(node, exp.Column) or node.args.get("db") or node.args.get("catalog"):
        return False
    qualifier = node.table
    return not qualifier or (table is not None and qualifier.lower() == table)


def read_typed_casts(tree: exp.Expression, casts: Mapping[tuple[str, str], str]) -> exp.Expression:
    """``CAST(<column> AS <target>)`` → the frame's column for it (``casts``: (column,
    target) → that column), where the query would cast every row (see the module). Runs on
    the Spark tree, after Drill's output names are set.

    A cast is replaced everywhere in the query or nowhere: Spark matches an expression outside
    an aggregate with the ``GROUP BY`` expressions, so a cast replaced in one place and not in
    another would no longer match. In a grouped query a cast outside an aggregate is replaced
    only when the same cast is itself a ``GROUP BY`` expression (``GROUP BY a`` allows
    ``CAST(a AS INT)`` in the select list, and would not allow the frame's column); ``SELECT
    DISTINCT`` groups by its select list. ``WHERE`` filters the rows before they are grouped and
    is matched with nothing, so a cast there is decided on its own."""
    if not casts or not may_read_typed(tree):
        return tree
    wanted = {(column.lower(), target): name for (column, target), name in casts.items()}
    aliases = other_aliases(tree)
    grouped: list[exp.Expression] | None = None  # what rows are grouped by, if they are
    if tree.args.get("group") is not None:
        grouped = list(tree.args["group"].expressions)
    elif tree.args.get("distinct") is not None:  # SELECT DISTINCT groups by its select list
        grouped = [e.this if isinstance(e, exp.Alias) else e for e in tree.expressions]
    table = table_name(tree)
    keys = {_key(e, table) for e in grouped or ()}
    found: dict[tuple[str, str], list[exp.Cast]] = {}
    refused: set[tuple[str, str]] = set()
    # what is read from the frame: casts in WHERE, each decided on its own, then the others
    replaced: list[tuple[exp.Cast, tuple[str, str]]] = []
    where = tree.args.get("where")
    for node in list(tree.find_all(exp.Cast)):
        key = _key(node, table)
        if key is None or key not in wanted:
            continue
        # the query's own WHERE (an aggregate's FILTER (WHERE ...) is decided with the rest)
        if where is not None and node.find_ancestor(exp.Where) is where:
            if _every_row(node):
                replaced.append((node, key))
            continue
        found.setdefault(key, []).append(node)
        column = node.this
        if (
            not _every_row(node)
            or (column.name.lower() in aliases and not column.table and _after_select(node))
            or (grouped is not None and key not in keys and not _in_aggregate(node))
        ):
            refused.add(key)
    for key, nodes in found.items():
        if key not in refused:
            replaced.extend((node, key) for node in nodes)
    for node, key in replaced:
        column = node.this
        out = exp.column(exp.to_identifier(wanted[key], quoted=True))
        if column.table:
            out.set("table", exp.to_identifier(column.table, quoted=True))
        node.replace(out)
    return tree


def _key(node: exp.Expression, table: str | None) -> tuple[str, str] | None:
    """(lower-cased column, Spark type) of a plain cast of a column of ``table``, else None (a
    map's member ``m.a`` is not the table's column ``a``)."""
    if not _plain_cast(node) or not is_table_column(node.this, table):
        return None
    if not isinstance(node.to, exp.DataType):
        return None
    return node.this.name.lower(), node.to.sql(dialect="spark").upper()


def _in_aggregate(node: exp.Expression) -> bool:
    """Whether ``node`` is an argument of an aggregate function (not of a window function's,
    which sees the grouped rows)."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.AggFunc) and not isinstance(parent.parent, exp.Window):
            return True
        parent = parent.parent
    return False


def other_aliases(tree: exp.Expression) -> set[str]:
    """The select list's aliases (lower-cased) that name something else than the column of
    that name (Drill's output names alias every column as itself: ``b AS b``)."""
    out = set()
    for item in tree.expressions:
        if isinstance(item, exp.Alias):
            named = item.this
            if not (isinstance(named, exp.Column) and named.name.lower() == item.alias.lower()):
                out.add(item.alias.lower())
    return out


def _after_select(node: exp.Expression) -> bool:
    """Whether ``node`` is in ``ORDER BY`` or ``HAVING``, where Spark resolves a name to the
    select list's alias before the table's column."""
    return node.find_ancestor(exp.Order, exp.Having) is not None


def _plain_cast(node: exp.Expression) -> TypeGuard[exp.Cast]:
    """Whether ``node`` is Spark's ``CAST`` with no format or default: the parser gives
    every cast as a ``TryCast``, a ``TRY_CAST`` being the one marked ``safe``."""
    return (
        isinstance(node, exp.Cast)
        and not node.args.get("safe")
        and not any(node.args.get(k) is not None for k in ("format", "action", "default"))
    )


def _every_row(node: exp.Expression) -> bool:
    """Whether every row reaching the query's expressions evaluates ``node``."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, _SOME_ROWS) or not isinstance(parent, _EVERY_ROW):
            return False
        if isinstance(parent, exp.Cast) and not _plain_cast(parent):
            return False  # TRY_CAST, or a cast with a default, hides the inner cast's error
        parent = parent.parent
    return True
