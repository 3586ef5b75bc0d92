"""Rule: a grouped query known to make few groups keeps the string MIN or MAX it has off the
sort Spark would otherwise run.

Spark's hash aggregate keeps fixed-width buffers only, so one aggregate holding a string (the
``MIN`` or ``MAX`` of a VARCHAR) makes the whole aggregate sort-based: every row is sorted by
the grouping keys first. Over 6.5 M rows cached from 300 MB of CSV, ``SELECT q, MAX(id),
MAX(name) ... GROUP BY q`` (q: 100 values) took 1.85 s, of which the sort was about 1.2 s.

Spark's object hash aggregate holds buffers of any type, and Spark takes it when an aggregate of
the query needs it (a ``collect_list``...). It keeps up to
``spark.sql.objectHashAggregate.sortBased.fallbackThreshold`` groups (128) per task in its hash
map and sorts the rest. So where the planner knows that the query makes at most that many
groups, one such MIN or MAX is written as

    COALESCE(MAX(s), get(collect_list(CAST(NULL AS STRING)), 0))

whose value is ``MAX(s)``'s (``collect_list`` keeps no NULL, ``get`` of an empty array is NULL),
and Spark runs the object hash aggregate: 1.02 s for the query above. The planner knows it when
the frame's metadata says how many values each ``GROUP BY`` key holds: a cast to an integer read
from the raw-file cache's typed copies, whose footers keep their range
(:data:`auger.scan.cache_typed.RANGE_METADATA`), an integer column or a map's integer member
(``t.m.qty``) whose parts give its range, or a string column whose parts list its few values
(:data:`auger.scan.cache_typed.VALUES_METADATA`, :mod:`auger.scan.cache_values`); the
groups are at most the product of those counts, each with NULL. Anything else is left as it
is: past the threshold the object hash aggregate sorts too, and at a million groups it was 27%
slower than the sort-based one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from auger.scan.cache_typed import MEMBERS_METADATA, RANGE_METADATA, VALUES_METADATA
from auger.sql.planning.typed_casts import is_table_column, may_read_typed, table_name

__all__ = ["FALLBACK_GROUPS", "hash_string_extremes", "key_path", "key_values"]

#: Spark's default ``spark.sql.objectHashAggregate.sortBased.fallbackThreshold``: the groups its
#: object hash aggregate keeps in a task's hash map before it sorts the rest.
FALLBACK_GROUPS = 128

#: Spark types whose MIN or MAX Spark's hash aggregate cannot hold.
_VARIABLE_WIDTH = ("string", "binary")


def hash_string_extremes(tree: exp.Expression, schema: Callable[[], Any]) -> exp.Expression:
    """One string ``MIN``/``MAX`` of the select list written so that Spark runs its object hash
    aggregate, where the query makes at most :data:`FALLBACK_GROUPS` groups (see the module).

    ``schema``: gives the one table's frame schema (Spark's ``StructType``), asked only for a
    query that could qualify. Runs on the Spark tree, after Drill's output names are set and the
    raw-file cache's typed casts are read."""
    if not may_read_typed(tree):
        return tree
    group = tree.args.get("group")
    if group is None or not group.expressions:
        return tree
    if any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets", "totals")):
        return tree  # more groupings than its keys say
    table = table_name(tree)
    extremes = [
        node
        for item in tree.expressions
        for node in item.find_all(exp.Max, exp.Min)
        if is_table_column(node.this, table)
        and not isinstance(node.parent, exp.Window | exp.Filter)
    ]
    if not extremes:
        return tree
    fields = {f.name.lower(): f for f in schema().fields}
    groups = 1
    for key in group.expressions:
        values = key_values(key, table, fields)
        if values is None:
            return tree
        groups *= values + 1  # and NULL
        if groups > FALLBACK_GROUPS:
            return tree
    for node in extremes:
        field = fields.get(node.this.name.lower())
        if field is not None and field.dataType.typeName() in _VARIABLE_WIDTH:
            node.replace(exp.Coalesce(this=node.copy(), expressions=[_nothing()]))
            return tree
    return tree


def key_values(key: exp.Expression, table: str | None, fields: dict[str, Any]) -> int | None:
    """How many values (NULL aside) a ``GROUP BY`` key holds at most: a column of the table,
    or a member of its map (``m.qty``, ``t.m.qty``), by its frame column's metadata; None:
    unknown."""
    path = key_path(key, table)
    field = fields.get(path[0].lower()) if path else None
    if path is None or field is None:
        return None
    metadata = field.metadata
    for member in path[1:]:
        members = metadata.get(MEMBERS_METADATA) or {}
        metadata = next((m for n, m in members.items() if n.lower() == member.lower()), None)
        if metadata is None:
            return None
    return _values(metadata)


def key_path(key: exp.Expression, table: str | None) -> list[str] | None:
    """A column of the table, then the members of its maps the key names (Spark reads a name's
    first part as the table when it names it, as a column otherwise); None: not a column."""
    if is_table_column(key, table):
        return [key.name]
    if not isinstance(key, exp.Column | exp.Dot):
        return None
    parts = key.parts
    if not all(isinstance(part, exp.Identifier) for part in parts):
        return None
    names = [part.name for part in parts]
    if table is not None and names[0].lower() == table:
        names = names[1:]
    return names or None


def _values(metadata: Any) -> int | None:
    """How many values (NULL aside) a frame column holds at most, by its metadata; None:
    unknown."""
    bounds = metadata.get(RANGE_METADATA)
    if bounds:
        return int(bounds[1]) - int(bounds[0]) + 1
    count = metadata.get(VALUES_METADATA)
    return None if count is None else int(count)


def _nothing() -> exp.Expression:
    """``get(collect_list(CAST(NULL AS STRING)), 0)``: NULL, by an aggregate only Spark's object
    hash aggregate runs."""
    none = exp.cast(exp.null(), exp.DataType.build("string"))
    collected = exp.Anonymous(this="collect_list", expressions=[none])
    return exp.Anonymous(this="get", expressions=[collected, exp.Literal.number(0)])
