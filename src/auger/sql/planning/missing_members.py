"""Map members the data lacks under a wildcard: Drill answers ``t.m.zz`` with NULL.

Under a wildcard the scan's maps must stay the files' own (Drill's ``*`` shows ``m`` as the
data has it, never a member only the query names), so the scan planning of
:mod:`auger.scan.members` leaves them alone. Here each reference to a member no file has is
replaced in the query by a typed NULL instead (:func:`null_missing_members`), of the type the
scan's one missing-column rule gives it (:func:`auger.scan.missing.guess_type`: Drill's
nullable INT for a member used as a value).
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from auger.scan.missing import guess_type
from auger.types import DataMode, MinorType, TupleSchema
from auger.types.spark import column_to_spark

__all__ = ["null_missing_members"]


def _lacks(schema: TupleSchema, members: list[str]) -> bool:
    """Whether the path names a map member (or a map root) no file has.

    A path that goes on below a non-map value (an array, a scalar) is not judged here.
    """
    col = schema.column(members[0])
    if col is None:
        return True
    for name in members[1:]:
        if col.type is not MinorType.MAP or col.mode is DataMode.REPEATED:
            return False
        child = next((c for c in col.children or () if c.name.lower() == name.lower()), None)
        if child is None:
            return True
        col = child
    return False


def null_missing_members(tree: exp.Expression, schemas: Mapping[str, TupleSchema]) -> None:
    """Replace, in place, each ``alias.m.zz`` naming a member no file has by a typed NULL.

    ``schemas`` maps the lower-cased alias of each table scanned with a wildcard to its table
    schema. Only alias-qualified member paths are looked at, as Drill requires for maps.
    """
    outer = _outer_select(tree)
    null_type = exp.DataType.build(column_to_spark(guess_type("null", None)).simpleString())
    for col in list(tree.find_all(exp.Column)):
        if isinstance(col.this, exp.Star):
            continue
        parts = [p.name for p in col.parts]
        node: exp.Expression = col
        while isinstance(node.parent, exp.Dot) and node.parent.this is node:
            node = node.parent
            parts.append(node.expression.name)
        if len(parts) < 3:
            continue  # t.m is a column, missing or not: the scan plans it
        schema = schemas.get(parts[0].lower())
        if schema is None or not _lacks(schema, parts[1:]):
            continue
        null: exp.Expr = exp.cast(exp.null(), null_type.copy())
        if isinstance(node.parent, exp.Select) and node.parent is not outer:
            # an inner select item keeps the name Spark gave the path (the outermost ones are
            # named as Drill names them, EXPR$n, after planning)
            null = exp.alias_(null, parts[-1], quoted=True)
        node.replace(null)


def _outer_select(tree: exp.Expression) -> exp.Expression:
    """The select whose items are the result's columns (the first of a set operation)."""
    node = tree
    while isinstance(node, exp.SetOperation | exp.Subquery):
        node = node.this
    return node
