"""Which columns each scan must deliver, found by qualifying the query against the scans' schemas.

Drill's tables have no fixed schema, so every name a query uses could be a column. Once each
scan's schema has been discovered, sqlglot's ``qualify`` attaches every column reference to the
table it belongs to (joins, correlated subqueries, CTEs and derived tables included). The scan of
that table then delivers exactly those columns, and as paths where only a part is used (``m.a``,
``columns[2]``), so readers can skip the rest. A name the data lacks but the query attributes to
a table becomes a typed null column of that table (Drill's rule); select-list aliases used in
GROUP BY / ORDER BY / HAVING are not columns.

The same qualified copy is type-annotated to find the divisions of two integers, which Drill
computes as integer division.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.schema import MappingSchema

from auger.projection import format_path, parse_path, path_segment
from auger.scan.plan import Requested
from auger.sql.frontend.dialect import AugerDrill

__all__ = ["Analysis", "Requested", "analyse_columns", "column_path", "table_alias"]

_log = logging.getLogger(__name__)

TABLE_TAG = "auger_table"
DIV_TAG = "auger_div"
KVGEN_TAG = "auger_kvgen"
TO_CHAR_TAG = "auger_to_char"

_INTEGER_TYPES = {
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
}
#: Clauses where a bare name may be a select-list alias rather than a column.
_ALIAS_CLAUSES = {"group", "order", "having", "qualify"}


@dataclass
class Analysis:
    requested: dict[int, Requested]  # table index -> what it must deliver
    integer_divisions: set[int]  # DIV_TAG ids of divisions of two integers
    #: KVGEN_TAG id -> member names, for KVGEN over a struct (a JSON object is one in Spark)
    kvgen_members: dict[int, list[str]] = field(default_factory=dict)
    #: TO_CHAR_TAG ids of TO_CHAR calls on numbers (Spark's FORMAT_NUMBER, not DATE_FORMAT)
    numeric_to_char: set[int] = field(default_factory=set)
    #: KVGEN_TAG id -> "member TYPE" of a struct whose members have no common value type
    kvgen_mixed: dict[int, list[str]] = field(default_factory=dict)


def table_alias(node: exp.Table) -> str:
    """The name a table reference goes by: its alias, else its (last) name."""
    if node.alias:
        return node.alias
    if isinstance(node.this, exp.Anonymous):  # table(dfs.`f.csv`(...)): the file's name
        inner = node.this.expressions[0] if node.this.expressions else None
        while isinstance(inner, exp.Dot):
            inner = inner.expression
        if isinstance(inner, exp.Anonymous):
            return inner.name
    return node.name


def column_path(col: exp.Column) -> tuple[str, str]:
    """The root column name and the Drill path the expression uses (``m.a.b``, ``columns[2]``).

    A name holding a dot is back-quoted in the path (:func:`~auger.projection.path_segment`):
    ``t.`m.a``` is the column named ``m.a``, ``t.m.a`` the member ``a`` of ``m``."""
    root = col.name
    path = path_segment(root)
    node: exp.Expression = col
    while True:
        parent = node.parent
        if isinstance(parent, exp.Dot) and parent.this is node:
            path += "." + path_segment(parent.expression.name)
            node = parent
            continue
        if (
            isinstance(parent, exp.Bracket)
            and parent.this is node
            and len(parent.expressions) == 1
            and isinstance(parent.expressions[0], exp.Literal)
            and parent.expressions[0].is_int
        ):
            # an index anywhere on the path (``m.l[0]``, ``a[0].b``): how the query uses it
            path += f"[{parent.expressions[0].name}]"
            node = parent
            continue
        break
    return root, path


def _respell(path: str, spelled: Mapping[str, str]) -> str:
    """``path`` with each name as the query first spelled it."""
    segments = [replace(s, name=spelled.get(s.name.lower(), s.name)) for s in parse_path(path)]
    return format_path(segments)


def _clause(col: exp.Expression, scope: Scope) -> str:
    node: Any = col
    while node.parent is not None and node.parent is not scope.expression:
        node = node.parent
    return node.arg_key or ""


def _select_aliases(scope: Scope) -> set[str]:
    expr = scope.expression
    if not isinstance(expr, exp.Select):
        return set()
    return {e.alias.lower() for e in expr.expressions if isinstance(e, exp.Alias)}


def _table_source(scope: Scope | None, alias: str) -> object:
    while scope is not None:
        found = scope.sources.get(alias)
        if found is not None:
            return found
        scope = scope.parent
    return None


def _view_of(source: object, views: Sequence[str]) -> int | None:
    if isinstance(source, exp.Table) and source.name in views:
        return views.index(source.name)
    return None


def _known_outside(
    scope: Scope | None, name: str, views: Sequence[str], schemas: dict[str, dict[str, str]]
) -> bool:
    while scope is not None:
        for _alias, (_node, src) in scope.selected_sources.items():
            if isinstance(src, exp.Table) and src.name in views and name in schemas[src.name]:
                return True
        scope = scope.parent
    return False


def _complete_schema(
    tree: exp.Expression, views: Sequence[str], schemas: dict[str, dict[str, str]]
) -> None:
    """Add the names the query attributes to a table but its data lacks, as nullable INTs.

    qualify cannot place names no schema has; these are exactly Drill's missing columns.
    """
    trees: dict[tuple[str, str], dict[str, Any]] = {}  # (view, root) -> members used
    for scope in traverse_scope(tree):
        sources = {
            alias: src
            for alias, (_node, src) in scope.selected_sources.items()
            if isinstance(src, exp.Table) and src.name in views
        }
        aliases = _select_aliases(scope)
        for col in scope.columns:
            if isinstance(col.this, exp.Star):
                continue
            name = col.name
            if col.table:
                src = _table_source(scope, col.table)
                n = _view_of(src, views)
                if n is None:
                    _add_missing_map(scope, col, views, schemas, trees)
                    continue
                if col.args.get("db"):
                    continue  # t.m.a: qualify resolves m itself when m is known
                known = schemas[views[n]]
                if name.lower() not in known:
                    known[name.lower()] = "int"
                continue
            if any(name.lower() in schemas[src.name] for src in sources.values()):
                continue
            if _known_outside(scope.parent, name.lower(), views, schemas):
                continue  # a correlated reference to an enclosing query's table
            if name.lower() in aliases and _clause(col, scope) in _ALIAS_CLAUSES:
                continue
            if len(scope.selected_sources) == 1 and len(sources) == 1:
                (src,) = sources.values()
                schemas[src.name][name.lower()] = "int"
    for (view, root), members in trees.items():
        schemas[view][root] = _struct_type(members)


def _add_missing_map(
    scope: Scope,
    col: exp.Column,
    views: Sequence[str],
    schemas: dict[str, dict[str, str]],
    trees: dict[tuple[str, str], dict[str, Any]],
) -> None:
    """``t.nope.x`` where ``nope`` is no column of table ``t``: a map the data lacks.

    The parser reads the alias as a schema name (``db``) and ``nope`` as the table; qualify
    would reject the unknown column, so ``nope`` joins the schema as a struct of the members
    the query names (the scan then plans it as Drill's missing map: NULL members).
    """
    parts = [p.name.lower() for p in col.parts]
    if len(parts) < 3:
        return
    n = _view_of(_table_source(scope, parts[0]), views)
    if n is None:
        return
    root = parts[1]
    if root in schemas[views[n]] and (views[n], root) not in trees:
        return  # a known column: qualify resolves its members
    node = trees.setdefault((views[n], root), {})
    for part in parts[2:]:
        node = node.setdefault(part, {})


def _struct_type(members: Mapping[str, Any]) -> str:
    """A Spark type string for a tree of member names (leaves as INT, Drill's null type)."""
    if not members:
        return "int"
    inner = ",".join(f"`{k}`:{_struct_type(v)}" for k, v in members.items())
    return f"struct<{inner}>"


def analyse_columns(
    tree: exp.Expression, views: Sequence[str], schemas: Mapping[str, Mapping[str, str]]
) -> Analysis | None:
    """Qualify a copy of ``tree`` and report each table's columns and the integer divisions.

    Args:
        tree: the query, its table nodes tagged with ``meta[TABLE_TAG]`` = table index and its
            divisions with ``meta[DIV_TAG]``.
        views: the view name of each table index.
        schemas: view name -> {lower column name -> Spark type string}.

    Returns:
        None when the query cannot be qualified (the caller then falls back to a coarser rule).
    """
    # qualify lower-cases unquoted names; the scan's columns keep the query's spelling
    spelled: dict[str, str] = {}
    for ident in tree.find_all(exp.Identifier):
        spelled.setdefault(ident.name.lower(), ident.name)
    copy = tree.copy()
    for node in list(copy.find_all(exp.Table)):
        n = node.meta.get(TABLE_TAG)
        if n is None:
            continue
        alias = table_alias(node)
        replacement = exp.Table(this=exp.to_identifier(views[n]))
        replacement.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
        node.replace(replacement)
    # Drill matches names without regard to case, quoted or not: a quoted `Year` is the
    # header's Year. The copy only serves the analysis, so its quoted names are lower-cased to
    # meet the lower-cased schema (the scan's spelling comes from ``spelled``).
    for ident in copy.find_all(exp.Identifier):
        if ident.quoted:
            ident.set("this", ident.name.lower())
    full = {v: dict(schemas.get(v, {})) for v in views}
    try:
        _complete_schema(copy, views, full)
        mapping = MappingSchema(
            {v: cols or {"__auger_none__": "int"} for v, cols in full.items()}, dialect="spark"
        )
        qualified = qualify(
            copy,
            schema=mapping,
            dialect=AugerDrill,
            validate_qualify_columns=False,
            expand_stars=False,
            expand_alias_refs=False,
            quote_identifiers=False,
            identify=False,
        )
    except Exception as exc:  # sqlglot's OptimizeError and friends: use the coarse rule
        _log.debug("qualify failed, falling back: %s", exc)
        return None
    requested: dict[int, Requested] = {n: Requested() for n in range(len(views))}
    for scope in traverse_scope(qualified):
        expr = scope.expression
        if isinstance(expr, exp.Select) and any(isinstance(e, exp.Star) for e in expr.expressions):
            for _alias, (_node, src) in scope.selected_sources.items():
                n = _view_of(src, views)
                if n is not None:
                    requested[n].star = True
        for col in scope.stars:
            if isinstance(col, exp.Column) and col.table:
                n = _view_of(_table_source(scope, col.table), views)
                if n is not None:
                    requested[n].star = True
        for col in scope.columns:
            if isinstance(col.this, exp.Star) or not col.table:
                continue
            n = _view_of(_table_source(scope, col.table), views)
            if n is None:
                continue
            root, path = column_path(col)
            requested[n].add(spelled.get(root.lower(), root), _respell(path, spelled))
    divisions: set[int] = set()
    members: dict[int, list[str]] = {}
    kvgen_mixed: dict[int, list[str]] = {}
    numeric_to_char: set[int] = set()
    try:
        annotated = annotate_types(qualified, schema=mapping, dialect=AugerDrill)
        for fn in annotated.find_all(exp.Anonymous):
            tag = fn.meta.get(KVGEN_TAG)
            arg_type = fn.expressions[0].type if fn.expressions else None
            if (
                tag is not None
                and arg_type is not None
                and arg_type.this == exp.DataType.Type.STRUCT
            ):
                members[tag] = [d.name for d in arg_type.expressions]
                kinds = [d.args.get("kind") for d in arg_type.expressions]
                if _mixed_value_types(kinds):
                    kvgen_mixed[tag] = [
                        f"{d.name} {k.sql(dialect=AugerDrill) if k else '?'}"
                        for d, k in zip(arg_type.expressions, kinds, strict=True)
                    ]
        for to_char in annotated.find_all(exp.TimeToStr):
            tag = to_char.meta.get(TO_CHAR_TAG)
            arg = to_char.this.type
            if tag is not None and arg is not None and arg.is_type(*exp.DataType.NUMERIC_TYPES):
                numeric_to_char.add(tag)
        for div in annotated.find_all(exp.Div):
            tag = div.meta.get(DIV_TAG)
            if tag is None:
                continue
            left, right = div.this.type, div.expression.type
            if (
                left is not None
                and right is not None
                and left.this in _INTEGER_TYPES
                and right.this in _INTEGER_TYPES
            ):
                divisions.add(tag)
    except Exception as exc:
        _log.debug("type annotation failed: %s", exc)
    return Analysis(requested, divisions, members, numeric_to_char, kvgen_mixed)


def _mixed_value_types(kinds: Sequence[exp.DataType | None]) -> bool:
    """Whether KVGEN's values (one per member) have no common type: Spark would force them into
    one by casting (``'x'`` to BIGINT fails mid-query), where Drill's KVGEN takes maps of one
    value type. Numbers of different widths have one (the wider); NULL-typed members fit any."""
    seen = {k.sql() for k in kinds if k is not None and k.this != exp.DataType.Type.NULL}
    if len(seen) < 2:
        return False
    numeric = [k for k in kinds if k is not None and k.is_type(*exp.DataType.NUMERIC_TYPES)]
    return len({k.sql() for k in numeric}) != len(seen)
