"""Drill → Spark rewrites of the query tree, one small function each, composed in ``REWRITES``.

Each takes and returns a sqlglot tree, changed in place: the translation copies the planner's
tree once and hands the copy through all of them (a copy each would cost more than the
rewrites). They run after table references were replaced by views.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

__all__ = ["REWRITES", "drill_output_names"]


def array_index_to_get(tree: exp.Expression) -> exp.Expression:
    """``a[n]`` → ``get(a, n)``: Drill answers NULL past the end where ANSI Spark would fail.

    Every bracket is rewritten, the inner ones of a chain (``a[3][0]``, ``a[1].b[2]``) too:
    a top-down transform would stop at the outer one and leave ``a[3]`` failing.
    """
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

    return tree.transform(fix, copy=False)


def kvgen_to_map_entries(tree: exp.Expression) -> exp.Expression:
    """Drill's KVGEN(map) lists key/value pairs: Spark's MAP_ENTRIES."""

    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and node.name.upper() == "KVGEN":
            return exp.Anonymous(this="MAP_ENTRIES", expressions=node.expressions)
        return node

    return tree.transform(fix, copy=False)


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
        if isinstance(node, exp.Anonymous) and len(node.expressions) == 1:
            type_function = _TYPE_FUNCTIONS.get(node.name.upper())
            if type_function is not None:
                return type_function(node.expressions[0])
        if isinstance(node, exp.Anonymous):
            spark_name = _FUNCTION_NAMES.get(node.name.upper())
            if spark_name is not None:
                return exp.Anonymous(this=spark_name, expressions=node.expressions)
        return node

    return tree.transform(fix, copy=False)


#: Spark ``typeof`` answers → Drill's minor type name and SQL type name. A pattern ending in
#: ``%`` is a prefix (parameterised types); the first match wins.
_TYPE_NAMES: tuple[tuple[str, str, str], ...] = (
    ("tinyint", "TINYINT", "TINYINT"),
    ("smallint", "SMALLINT", "SMALLINT"),
    ("int", "INT", "INTEGER"),
    ("bigint", "BIGINT", "BIGINT"),
    ("float", "FLOAT4", "FLOAT"),
    ("double", "FLOAT8", "DOUBLE"),
    ("string", "VARCHAR", "CHARACTER VARYING"),
    ("boolean", "BIT", "BOOLEAN"),
    ("date", "DATE", "DATE"),
    ("timestamp", "TIMESTAMP", "TIMESTAMP"),
    ("timestamp_ntz", "TIMESTAMP", "TIMESTAMP"),
    ("time%", "TIME", "TIME"),
    ("binary", "VARBINARY", "BINARY VARYING"),
    ("decimal%", "VARDECIMAL", "DECIMAL"),
    ("struct%", "MAP", "STRUCT"),
    ("array%", "LIST", "ARRAY"),
    ("map%", "DICT", "MAP"),
    ("interval year%", "INTERVALYEAR", "INTERVAL YEAR TO MONTH"),
    ("interval month%", "INTERVALYEAR", "INTERVAL YEAR TO MONTH"),
    ("interval", "INTERVAL", "INTERVAL"),
    ("interval%", "INTERVALDAY", "INTERVAL DAY TO SECOND"),
    ("void", "NULL", "NULL"),
)


def _type_case(spark_type: exp.Expression, column: int) -> exp.Case:
    """A CASE over a Spark type name (a string expression) naming Drill's type (column 1 or 2)."""
    case = exp.Case()
    for row in _TYPE_NAMES:
        pattern, name = row[0], row[column]
        test: exp.Expression
        if pattern.endswith("%"):
            test = exp.Like(this=spark_type.copy(), expression=exp.Literal.string(pattern))
        else:
            test = exp.EQ(this=spark_type.copy(), expression=exp.Literal.string(pattern))
        case = case.when(test, exp.Literal.string(name))
    return case


def _spark_type(value: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this="TYPEOF", expressions=[value.copy()])


def _is_array(spark_type: exp.Expression) -> exp.Expression:
    return exp.Like(this=spark_type.copy(), expression=exp.Literal.string("array<%"))


def _drill_typeof(value: exp.Expression) -> exp.Expression:
    """Drill's TYPEOF names Drill's types (``BIGINT``, ``VARCHAR``, ``NULL`` for a null)."""
    spark_type = _spark_type(value)
    case = exp.Case().when(
        exp.Is(this=value.copy(), expression=exp.Null()), exp.Literal.string("NULL")
    )
    case.set("ifs", case.args["ifs"] + _type_case(spark_type, 1).args["ifs"])
    return case.else_(exp.Upper(this=spark_type.copy()))


def _drill_type_of(value: exp.Expression) -> exp.Expression:
    """Drill's DRILLTYPEOF: the minor type whatever the value (``INT``, ``VARCHAR``, ``FLOAT8``).

    An array is Drill's repeated type of its elements, so its name is the elements' type.
    """
    spark_type = _spark_type(value)
    element = exp.Anonymous(
        this="REGEXP_EXTRACT",
        expressions=[spark_type.copy(), exp.Literal.string("^array<(.*)>$"), exp.Literal.number(1)],
    )
    of_element = _type_case(element, 1).else_(exp.Upper(this=element.copy()))
    of_value = _type_case(spark_type, 1).else_(exp.Upper(this=spark_type.copy()))
    return exp.Case().when(_is_array(spark_type), of_element).else_(of_value)


def _sql_type_of(value: exp.Expression) -> exp.Expression:
    """Drill's SQLTYPEOF: the SQL type name (``INTEGER``, ``CHARACTER VARYING``, ``DECIMAL(9, 2)``).

    A decimal carries its precision and scale, written ``(p, s)``.
    """
    spark_type = _spark_type(value)
    decimal = exp.Anonymous(
        this="REPLACE",
        expressions=[
            exp.Upper(this=spark_type.copy()),
            exp.Literal.string(","),
            exp.Literal.string(", "),
        ],
    )
    case = exp.Case().when(
        exp.Like(this=spark_type.copy(), expression=exp.Literal.string("decimal%")), decimal
    )
    case.set("ifs", case.args["ifs"] + _type_case(spark_type, 2).args["ifs"])
    return case.else_(exp.Upper(this=spark_type.copy()))


def _mode_of(value: exp.Expression) -> exp.Expression:
    """Drill's MODEOF: ``ARRAY`` for an array, else ``NOT NULL`` or ``NULLABLE``.

    Spark does not tell a query whether a value may be null, so the answer comes from the
    expression itself: one built from literals alone (no column, no NULL) cannot be null;
    anything reading a column is ``NULLABLE``, as every column Drill reads from a file is.
    """
    constant = value.find(exp.Column, exp.Null) is None
    other = exp.Literal.string("NOT NULL" if constant else "NULLABLE")
    return exp.Case().when(_is_array(_spark_type(value)), exp.Literal.string("ARRAY")).else_(other)


_TYPE_FUNCTIONS: dict[str, Callable[[exp.Expression], exp.Expression]] = {
    "DRILLTYPEOF": _drill_type_of,
    "SQLTYPEOF": _sql_type_of,
    "MODEOF": _mode_of,
}


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
