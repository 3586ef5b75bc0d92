"""Drill → Spark rewrites of the query tree, one small function each, composed in ``REWRITES``.

Each takes and returns a sqlglot tree. They run after table references were replaced by views.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

__all__ = ["REWRITES", "drill_output_names"]


def array_index_to_get(tree: exp.Expression) -> exp.Expression:
    """``a[n]`` → ``get(a, n)``: Drill answers NULL past the end where ANSI Spark would fail.

    Every bracket is rewritten, the inner ones of a chain (``a[3][0]``, ``a[1].b[2]``) too:
    a top-down transform would stop at the outer one and leave ``a[3]`` failing. Works on a
    copy, as the other rewrites do.
    """
    tree = tree.copy()
    for node in list(tree.find_all(exp.Bracket)):
        if len(node.expressions) != 1:
            continue
        idx = node.expressions[0]
        if isinstance(idx, exp.Literal) and idx.is_int:
            new = exp.Anonymous(this="get", expressions=[node.this, idx])
            if node is tree:
                tree = new
            else:
                node.replace(new)
    return tree


def flatten_to_explode(tree: exp.Expression) -> exp.Expression:
    """Drill's FLATTEN(list) makes a row per element: Spark's EXPLODE, not Spark's flatten."""

    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Flatten):
            return exp.Explode(this=node.this)
        if isinstance(node, exp.Anonymous) and node.name.upper() == "FLATTEN":
            return exp.Explode(this=node.expressions[0])
        return node

    return tree.transform(fix)


def kvgen_to_map_entries(tree: exp.Expression) -> exp.Expression:
    """Drill's KVGEN(map) lists key/value pairs: Spark's MAP_ENTRIES."""

    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and node.name.upper() == "KVGEN":
            return exp.Anonymous(this="MAP_ENTRIES", expressions=node.expressions)
        return node

    return tree.transform(fix)


def drill_functions(tree: exp.Expression) -> exp.Expression:
    """Drill functions Spark spells differently (a table: Drill name → Spark name)."""

    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and node.name.upper() == "REGEXP_MATCHES":
            # Drill's REGEXP_MATCHES must match the whole string; Spark's RLIKE finds a match
            value, pattern = node.expressions[0], node.expressions[1]
            anchored = exp.Concat(
                expressions=[exp.Literal.string("^(?:"), pattern, exp.Literal.string(")$")]
            )
            return exp.RegexpLike(this=value, expression=anchored)
        if isinstance(node, exp.Typeof):
            return _drill_typeof(node.this)
        if isinstance(node, exp.Anonymous):
            spark_name = _FUNCTION_NAMES.get(node.name.upper())
            if spark_name is not None:
                return exp.Anonymous(this=spark_name, expressions=node.expressions)
        return node

    return tree.transform(fix)


#: Spark ``typeof`` answers → Drill's type names (prefix matches for parameterised types).
_TYPEOF_NAMES: tuple[tuple[str, str], ...] = (
    ("tinyint", "TINYINT"),
    ("smallint", "SMALLINT"),
    ("int", "INT"),
    ("bigint", "BIGINT"),
    ("float", "FLOAT4"),
    ("double", "FLOAT8"),
    ("string", "VARCHAR"),
    ("boolean", "BIT"),
    ("date", "DATE"),
    ("timestamp", "TIMESTAMP"),
    ("timestamp_ntz", "TIMESTAMP"),
    ("binary", "VARBINARY"),
    ("decimal%", "VARDECIMAL"),
    ("struct%", "MAP"),
    ("array%", "LIST"),
    ("map%", "DICT"),
    ("interval%", "INTERVAL"),
)


def _drill_typeof(value: exp.Expression) -> exp.Expression:
    """Drill's TYPEOF names Drill's types (``BIGINT``, ``VARCHAR``, ``NULL`` for a null)."""
    spark_type = exp.Anonymous(this="TYPEOF", expressions=[value.copy()])
    case = exp.Case().when(
        exp.Is(this=value.copy(), expression=exp.Null()), exp.Literal.string("NULL")
    )
    for pattern, name in _TYPEOF_NAMES:
        test: exp.Expression
        if pattern.endswith("%"):
            test = exp.Like(this=spark_type.copy(), expression=exp.Literal.string(pattern))
        else:
            test = exp.EQ(this=spark_type.copy(), expression=exp.Literal.string(pattern))
        case = case.when(test, exp.Literal.string(name))
    return case.else_(exp.Upper(this=spark_type.copy()))


#: Drill function → Spark function of the same arguments and meaning.
_FUNCTION_NAMES: dict[str, str] = {
    "REPEATED_CONTAINS": "ARRAY_CONTAINS",
    "BYTE_SUBSTR": "SUBSTR",
}


def several_flattens_to_lateral_views(tree: exp.Expression) -> exp.Expression:
    """Spark allows one generator per SELECT; Drill's several FLATTENs make a cross product.

    Each EXPLODE of a select list with more than one becomes a ``LATERAL VIEW`` whose column
    takes its place, which gives the same cross product of the arrays' elements.
    """
    for select in list(tree.find_all(exp.Select)):
        explodes = [
            e
            for item in select.expressions
            for e in item.find_all(exp.Explode)
            if e.find_ancestor(exp.Select) is select
        ]
        if len(explodes) < 2:
            continue
        for k, node in enumerate(explodes):
            alias = f"__auger_flatten{k}"
            lateral = exp.Lateral(
                this=exp.Explode(this=node.this),
                view=True,
                alias=exp.TableAlias(
                    this=exp.to_identifier(alias), columns=[exp.to_identifier("value")]
                ),
            )
            select.append("laterals", lateral)
            column = exp.column("value", table=alias)
            if node.parent is not None and isinstance(node.parent, exp.Select):
                node.replace(exp.alias_(column, f"EXPR${select.expressions.index(node)}"))
            else:
                node.replace(column)
    return tree


REWRITES: tuple[Callable[[exp.Expression], exp.Expression], ...] = (
    flatten_to_explode,
    kvgen_to_map_entries,
    array_index_to_get,
    drill_functions,
    several_flattens_to_lateral_views,
)


def _first_select(tree: exp.Expression) -> exp.Select | None:
    node = tree
    while isinstance(node, exp.SetOperation):
        node = node.this
    if isinstance(node, exp.Subquery):
        node = node.this
    return node if isinstance(node, exp.Select) else None


def drill_output_names(tree: exp.Expression) -> exp.Expression:
    """Name result columns as Drill does: unaliased ``EXPR$<pos>``, duplicates ``a0``."""
    select = _first_select(tree)
    if select is None:
        return tree
    used: set[str] = set()
    new_exprs: list[Any] = []
    for pos, e in enumerate(select.expressions):
        if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
            new_exprs.append(e)
            continue
        if isinstance(e, exp.Alias):
            name = e.alias
        elif isinstance(e, exp.Column) and _is_plain(e):
            name = e.name
        else:
            name = f"EXPR${pos}"
        unique, n = name, 0
        while unique.lower() in used:
            unique = f"{name}{n}"
            n += 1
        used.add(unique.lower())
        if isinstance(e, exp.Alias):
            if unique != name:
                e.set("alias", exp.to_identifier(unique, quoted=True))
            new_exprs.append(e)
        else:
            # Even a plain column is aliased: Spark would name it as the data spells it,
            # Drill as the query does (``SELECT EMPLOYEE_ID`` answers ``EMPLOYEE_ID``).
            new_exprs.append(exp.alias_(e, unique, quoted=True))
    select.set("expressions", new_exprs)
    return tree


def _is_plain(col: exp.Column) -> bool:
    """A column, maybe qualified by its table, but not a map member path (``t.m.a``)."""
    return not col.args.get("db") and not col.args.get("catalog")
