"""Plan-time file pruning: drop files whose ``dirN``, ``key=value`` or file-name columns make
the query's WHERE clause false for every row they could hold.

Those columns have one value per file, so a predicate that uses only them (and literals) can be
evaluated once per file on the driver. Pruning is conservative: equality, ``<>``, ``<``, ``<=``,
``>``, ``>=``, ``IN``, ``IS [NOT] NULL``, ``AND``, ``OR`` and ``NOT`` are understood; anything
else is "unknown" and keeps the file. A file goes only when the predicate is definitely false or
null (SQL's WHERE drops null rows too). Spark still applies the whole WHERE to the rows read, so
pruning changes speed, never answers.

A table on the null-supplying side of an outer join is never pruned: its WHERE predicates see
the padded nulls, not the files.
"""

from __future__ import annotations

import enum
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

from sqlglot import exp

from auger.formats.lakehouse import TableSelection
from auger.formats.lakehouse.pruning import Comparison, files_matching
from auger.scan.implicit import implicit_value
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.storage.selection import FileSelection

__all__ = ["prune_by_statistics", "prune_files", "prune_scan"]

T = TypeVar("T")


class Truth(enum.Enum):
    TRUE = "true"
    FALSE = "false"
    NULL = "null"
    UNKNOWN = "unknown"  # auger cannot tell: keep the file
    NOT_TRUE = "not true"  # false or null, auger cannot tell which (its NOT is unknown)


_COMPARISONS: dict[type[exp.Expression], str] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
}
_FLIPPED = {"=": "=", "<>": "<>", ">": "<", ">=": "<=", "<": ">", "<=": ">="}


def prune_scan(planned: T, node: exp.Table) -> T:
    """The planned scan (anything with a ``spec``) keeping only files the WHERE may match.

    Args:
        planned: the planner's planned scan of ``node``.
        node: the query's table reference, still in the query tree.
    """
    spec: ScanSpec = planned.spec  # type: ignore[attr-defined]
    where = _where_for(node)
    if where is None:
        return planned
    kept = prune_files(spec, where, node.alias_or_name, _is_only_table(node))
    if len(kept) == len(spec.files):
        return planned
    return replace(planned, spec=spec.with_files(kept))  # type: ignore[type-var]


def prune_by_statistics(planned: T, node: exp.Table, selection: FileSelection) -> T:
    """The planned scan of an Iceberg or Delta table keeping only the files whose statistics
    (partition values, column bounds) leave room for rows the WHERE clause's ``column op
    literal`` conjuncts accept; other tables' scans as they are."""
    snapshot = (
        getattr(selection, "snapshot", None) if isinstance(selection, TableSelection) else None
    )
    where = _where_for(node) if snapshot is not None else None
    if snapshot is None or where is None:
        return planned
    ctx = _Context(
        {c.name.lower(): "" for c in snapshot.schema},
        node.alias_or_name.lower(),
        _is_only_table(node),
    )
    comparisons = []
    for part in where.flatten() if isinstance(where, exp.And) else [where]:
        op = next((o for kind, o in _COMPARISONS.items() if type(part) is kind), None)
        if op is None or op == "<>":
            continue
        left, right = _column(part.this, ctx), _column(part.expression, ctx)
        column, other = (left, part.expression) if left else (right, part.this)
        is_literal, value = _literal(other)
        if column is None or not is_literal or value is None:
            continue
        if isinstance(value, Decimal):
            value = int(value) if value == value.to_integral_value() else float(value)
        compared = Comparison(column, op, value)
        comparisons.append(compared if left else compared.flipped())
    kept = files_matching(snapshot, comparisons)
    spec: ScanSpec = planned.spec  # type: ignore[attr-defined]
    if kept is None:
        return planned
    files = tuple(f for f in spec.files if f.path in kept)
    if len(files) == len(spec.files):
        return planned
    return replace(planned, spec=spec.with_files(files))  # type: ignore[type-var]


def prune_files(
    spec: ScanSpec, where: exp.Expression, alias: str, unqualified_ok: bool = True
) -> tuple[FileSplit, ...]:
    """The spec's files for which ``where`` is not definitely false or null."""
    columns = {
        name.lower(): src
        for name, src in spec.sources.items()
        if src not in (ColumnSource.TABLE, ColumnSource.MISSING, ColumnSource.LMT)
    }
    if not columns:
        return spec.files
    ctx = _Context(columns, alias.lower(), unqualified_ok)
    if not any(ctx.source(c) for c in where.find_all(exp.Column)):
        return spec.files
    kept = []
    for f in spec.files:
        values = {
            name: implicit_value(src, f.path, spec.selection_root, f.mtime)
            for name, src in columns.items()
        }
        if _eval(where, values, ctx) not in (Truth.FALSE, Truth.NULL, Truth.NOT_TRUE):
            kept.append(f)
    return tuple(kept)


class _Context:
    def __init__(self, columns: dict[str, str], alias: str, unqualified_ok: bool) -> None:
        self.columns = columns
        self.alias = alias
        self.unqualified_ok = unqualified_ok

    def source(self, col: exp.Column) -> str | None:
        """The per-file column a reference means, if it is one of this table's."""
        if col.table:
            if col.table.lower() != self.alias or col.args.get("db"):
                return None
        elif not self.unqualified_ok:
            return None
        name = col.name.lower()
        return name if name in self.columns else None


def _where_for(node: exp.Table) -> exp.Expression | None:
    select = node.parent
    while select is not None and not isinstance(select, exp.Select):
        if isinstance(select, exp.Subquery):
            return None
        select = select.parent
    if select is None:
        return None
    where = select.args.get("where")
    if where is None:
        return None
    joins = select.args.get("joins") or []
    for join in joins:
        side = (join.side or "").upper()
        kind = (join.kind or "").upper()
        if side or kind in ("OUTER", "FULL", "SEMI", "ANTI"):
            return None  # outer joins pad with nulls the WHERE then sees: do not prune
    from_ = select.args.get("from") or select.args.get("from_")
    in_scope = [t for t in ([from_.this] if from_ is not None else []) + [j.this for j in joins]]
    if not any(t is node for t in in_scope):
        return None
    return where.this


def _is_only_table(node: exp.Table) -> bool:
    select = node.find_ancestor(exp.Select)
    return select is None or not select.args.get("joins")


def _literal(e: exp.Expression) -> tuple[bool, Any]:
    """(is a literal, its value) — strings as str, numbers as Decimal, NULL as None."""
    if isinstance(e, exp.Null):
        return True, None
    if isinstance(e, exp.Literal):
        if e.is_string:
            return True, e.this
        try:
            return True, Decimal(e.this)
        except InvalidOperation:
            return False, None
    if isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal) and not e.this.is_string:
        ok, v = _literal(e.this)
        return ok, -v if ok and v is not None else None
    if isinstance(e, exp.Paren):
        return _literal(e.this)
    return False, None


def _column(e: exp.Expression, ctx: _Context) -> str | None:
    while isinstance(e, exp.Paren):
        e = e.this
    return ctx.source(e) if isinstance(e, exp.Column) else None


def _compare(op: str, value: str | None, lit: Any) -> Truth:
    if value is None or lit is None:
        return Truth.NULL
    left: Any = value
    if isinstance(lit, Decimal):
        try:  # Spark compares a string with a number as numbers
            left = Decimal(value.strip())
        except InvalidOperation:
            return Truth.UNKNOWN  # Spark would fail or null it: let Spark decide
    result = {
        "=": left == lit,
        "<>": left != lit,
        ">": left > lit,
        ">=": left >= lit,
        "<": left < lit,
        "<=": left <= lit,
    }[op]
    return Truth.TRUE if result else Truth.FALSE


def _eval(e: Any, values: dict[str, str | None], ctx: _Context) -> Truth:
    if isinstance(e, exp.Paren):
        return _eval(e.this, values, ctx)
    if isinstance(e, exp.And):
        return _and([_eval(e.this, values, ctx), _eval(e.expression, values, ctx)])
    if isinstance(e, exp.Or):
        return _or([_eval(e.this, values, ctx), _eval(e.expression, values, ctx)])
    if isinstance(e, exp.Not):
        return _not(_eval(e.this, values, ctx))
    if isinstance(e, exp.Boolean):
        return Truth.TRUE if e.this else Truth.FALSE
    op = _COMPARISONS.get(type(e))
    if op is not None:
        left, right = e.this, e.expression
        col = _column(left, ctx)
        ok, lit = _literal(right)
        if col is None or not ok:
            col = _column(right, ctx)
            ok, lit = _literal(left)
            op = _FLIPPED[op]
        if col is None or not ok:
            return Truth.UNKNOWN
        return _compare(op, values[col], lit)
    if isinstance(e, exp.In):
        col = _column(e.this, ctx)
        if col is None or e.args.get("query") is not None:
            return Truth.UNKNOWN
        items = []
        for item in e.expressions:
            ok, lit = _literal(item)
            if not ok:
                return Truth.UNKNOWN
            items.append(_compare("=", values[col], lit))
        return _or(items) if items else Truth.UNKNOWN
    if isinstance(e, exp.Is) and isinstance(e.expression, exp.Null):
        col = _column(e.this, ctx)
        if col is None:
            return Truth.UNKNOWN
        return Truth.TRUE if values[col] is None else Truth.FALSE
    return Truth.UNKNOWN


def _and(parts: list[Truth]) -> Truth:
    if Truth.FALSE in parts:
        return Truth.FALSE
    not_true = Truth.NULL in parts or Truth.NOT_TRUE in parts
    if Truth.UNKNOWN in parts:
        return Truth.NOT_TRUE if not_true else Truth.UNKNOWN
    if Truth.NOT_TRUE in parts:
        return Truth.NOT_TRUE
    return Truth.NULL if Truth.NULL in parts else Truth.TRUE


def _or(parts: list[Truth]) -> Truth:
    for t in (Truth.TRUE, Truth.UNKNOWN, Truth.NOT_TRUE, Truth.NULL):
        if t in parts:
            return t
    return Truth.FALSE


def _not(t: Truth) -> Truth:
    flipped = {Truth.TRUE: Truth.FALSE, Truth.FALSE: Truth.TRUE, Truth.NOT_TRUE: Truth.UNKNOWN}
    return flipped.get(t, t)
