"""Rule: a query whose aggregates are all ``MIN`` and ``MAX`` of columns, one of them text,
aggregates only the rows that can hold an extreme.

Spark's hash aggregate keeps fixed-width buffers only, so the ``MAX`` of a VARCHAR runs in its
sort-based aggregate, or in its object hash aggregate where the planner knows the groups are
few (:mod:`auger.sql.planning.few_groups`), neither of which Spark generates code for. Over
6.5 M rows cached from 300 MB of CSV, ``SELECT q, MAX(id), MAX(name) ... GROUP BY q`` (q: 100
values) took 1.1 s in Spark, 0.4 s without ``MAX(name)``. Almost every row goes through that
aggregate for nothing: it is below its group's maximum.

So where the table's frame reads Parquet files (a Parquet table, the raw-file cache's
entries) of :data:`~auger.sql.planning.top_rows.MIN_BYTES` at least, the planner reads a
sample of them (:func:`auger.formats.parquet_sample.extreme_rows`), takes each group's
extremes in it, and adds to the query a filter the generated code runs on every row::

    WHERE id >= <bound of id> OR name >= <bound of name>
       OR q IS NULL OR NOT (q IN (<the groups seen>))

A ``MAX``'s bound is the least of the seen groups' maxima (a ``MIN``'s, ``<=`` the greatest of
their minima). Why the answer is the query's own: a group seen in the sample has a maximum at
least as large as the one seen, which is at least the bound, so the rows holding its maximum of
each column pass the filter (and with them the group); a group not seen, or whose key is NULL,
passes whole. A row that passes by one column's bound gives the other aggregates a value of
its own group, which is within that group's extremes. A group whose sample holds a NULL extreme
(all its sampled values NULL) counts as not seen. Rows of a NULL value never hold a ``MIN`` or
``MAX``. Where the groups seen are all the keys can make, and no key is ever NULL, the terms
for the others go (see :func:`_every_group_seen`).

Applied to one SELECT over one table with no ``WHERE`` (the sample would have to be filtered as
the query is), ``DISTINCT``, window, function auger does not know (it may aggregate), grouping
sets or aggregate ``FILTER``; every aggregate a ``MIN`` or ``MAX`` of a column, one at least of
text; every ``GROUP BY`` key a column, a member of a struct column (``t.m.qty``) or an integer
cast of a column; integer and text values only
(a float's NaN and a timestamp's zone are compared differently by pyarrow and Spark), text
in Spark's default collation (byte by byte, as pyarrow compares it), and at most
:data:`MAX_KEYS` groups seen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from auger.formats.parquet_sample import extreme_rows, never_null_leaves
from auger.spark.plan_tree import parquet_bytes, parquet_lineage
from auger.sql.planning.few_groups import key_path, key_values
from auger.sql.planning.top_rows import MIN_BYTES
from auger.sql.planning.typed_casts import is_table_column, may_read_typed, table_name

__all__ = ["MAX_KEYS", "Sample", "Sampler", "bound_extremes", "frame_sample"]

#: The most groups whose keys the filter lists: the groups of a query this helps are few.
MAX_KEYS = 1024


@dataclass(frozen=True)
class Sample:
    """Rows of a table's frame, and what its files say of all its rows.

    Attributes:
        rows: the values of each path asked for (a frame column, then members of its
            structs), of rows near the extremes asked for.
        never_null: the paths asked for (lower-cased) that no row of the table holds NULL at,
            a member's struct included.
    """

    rows: Mapping[tuple[str, ...], Any]
    never_null: frozenset[tuple[str, ...]]


@dataclass(frozen=True)
class _Key:
    """A ``GROUP BY`` key the rule takes.

    Attributes:
        expr: the key as the query groups by it.
        path: the frame column it reads, then the members of its structs.
        cast: the integer type it casts the column to, if it does.
    """

    expr: exp.Expression
    path: tuple[str, ...]
    cast: pa.DataType | None


#: A sample gives the values of paths of a frame (a column, then members of its structs), from
#: rows near the extremes it is told of ((column, True) for a ``MAX``, False for a ``MIN``);
#: None: no sample.
Sampler = Callable[[Sequence[tuple[str, ...]], Sequence[tuple[str, bool]]], Sample | None]

#: Spark's default collation: text ordered and compared by its UTF-8 bytes.
_BINARY = "UTF8_BINARY"

#: Spark's integer types, as the casts a ``GROUP BY`` key may be.
_INTEGERS = {
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INT": pa.int32(),
    "BIGINT": pa.int64(),
}


def bound_extremes(
    tree: exp.Expression, schema: Callable[[], Any], sample: Sampler
) -> exp.Expression:
    """The query with the filter of the module added, where it applies (see the module).

    ``schema``: the one table's frame schema (Spark's ``StructType``); ``sample``: reads the
    sample. Both are asked only for a query of the shape. Runs on the Spark tree, after the
    raw-file cache's typed casts are read and before :mod:`~auger.sql.planning.few_groups`."""
    shape = _shape(tree)
    if shape is None:
        return tree
    keys, extremes = shape
    fields = {f.name.lower(): f for f in schema().fields}
    if not any(_is_text(fields, column) for _, column in extremes):
        return tree
    paths = [k.path for k in keys] + [(c,) for _, c in extremes]
    if not all(_binary_order(fields, path[0]) for path in paths):
        return tree
    found = sample(list(dict.fromkeys(paths)), [(column, m) for m, column in extremes])
    if found is None:
        return tree
    try:
        bounds = _bounds(found.rows, keys, extremes)
    except (pa.ArrowException, UnicodeDecodeError):  # text that is not UTF-8, say
        bounds = None
    if bounds is None:
        return tree
    limits, seen = bounds
    terms: list[exp.Expression] = []
    for (is_max, column), value in zip(extremes, limits, strict=True):
        side = exp.GTE if is_max else exp.LTE
        terms.append(
            side(this=exp.column(exp.to_identifier(column, quoted=True)), expression=value)
        )
    if keys and not _every_group_seen(keys, len(seen), table_name(tree), fields, found):
        exprs = [k.expr for k in keys]
        terms.extend(exp.Is(this=e.copy(), expression=exp.Null()) for e in exprs)
        this: exp.Expression = (
            exprs[0].copy() if len(exprs) == 1 else exp.Tuple(expressions=[e.copy() for e in exprs])
        )
        terms.append(exp.Not(this=exp.Paren(this=exp.In(this=this, expressions=seen))))
    tree.set("where", exp.Where(this=exp.or_(*terms)))
    return tree


def frame_sample(frame: Any) -> Sampler:
    """The sampler of a table's frame: rows near the extremes in the Parquet files it reads, when
    it reads :data:`MIN_BYTES` of them at least and each path asked for is one of their columns
    or a member of one, or an integer cast of either
    (:func:`auger.spark.plan_tree.parquet_lineage`)."""

    def read(
        paths: Sequence[tuple[str, ...]], extremes: Sequence[tuple[str, bool]]
    ) -> Sample | None:
        if (parquet_bytes(frame) or -1) < MIN_BYTES:
            return None
        conf = frame.sparkSession.conf
        if str(conf.get("spark.sql.session.collation.default", _BINARY)).upper() != _BINARY:
            return None  # the filter's literals would compare otherwise
        if str(conf.get("spark.sql.parser.escapedStringLiterals", "false")).lower() == "true":
            return None  # the filter's literals would read otherwise
        lineage = parquet_lineage(frame, list(paths))
        if lineage is None:
            return None
        sources = lineage.sources
        stored = list(dict.fromkeys(sources[p][0] for p in paths))
        ends = [(sources[(column,)][0], up) for column, up in extremes]
        if any(sources[(column,)][1] for column, _ in extremes):
            return None  # an extreme of a column the frame reads from a struct
        table = extreme_rows(lineage.files, stored, ends)
        if table is None:
            return None
        rows = {}
        for path in paths:
            column, members, target = sources[path]
            values = table[column]
            for member in members:
                index = (
                    values.type.get_field_index(member) if pa.types.is_struct(values.type) else -1
                )
                if index < 0:
                    return None
                values = pc.struct_field(values, [index])
            if target is not None:
                values = _integer_cast(values, _INTEGERS.get(target.upper()))
                if values is None:
                    return None
            rows[path] = values
        leaves = never_null_leaves(lineage.files, stored)
        kept = {
            tuple(p.lower() for p in path)
            for path in paths
            if (sources[path][0], *sources[path][1]) in leaves
        }
        return Sample(rows, frozenset(kept))

    return read


def _every_group_seen(
    keys: Sequence[_Key], seen: int, table: str | None, fields: Any, found: Sample
) -> bool:
    """Whether the sample saw every group the query makes: no key is ever NULL, and the groups
    seen are as many as the keys' values can make (their frame columns' metadata says how many
    values each holds, :func:`auger.sql.planning.few_groups.key_values`). The filter then needs
    no term for the groups not seen, and is made of comparisons of columns with literals
    alone, which Spark's Parquet reader also checks against each row group's statistics:
    files written in the order of a column the query takes the extreme of are mostly
    skipped."""
    groups = 1
    for key in keys:
        if key.cast is not None or tuple(p.lower() for p in key.path) not in found.never_null:
            return False
        values = key_values(key.expr, table, fields)
        if values is None:
            return False
        groups *= values
    return groups == seen


def _is_text(fields: dict[str, Any], name: str) -> bool:
    """Whether the frame column ``name`` is text."""
    field = fields.get(name.lower())
    return field is not None and field.dataType.typeName() == "string"


def _binary_order(fields: dict[str, Any], name: str) -> bool:
    """Whether Spark compares the frame column ``name``'s values as pyarrow does: anything but
    text with a collation other than Spark's default, byte by byte (``UTF8_BINARY``)."""
    field = fields.get(name.lower())
    return field is None or getattr(field.dataType, "collation", _BINARY) == _BINARY


def _shape(tree: exp.Expression) -> tuple[list[_Key], list[tuple[bool, str]]] | None:
    """The query's ``GROUP BY`` keys and its extremes as (is a MAX, column), where the query
    has the module's shape; else None."""
    if not may_read_typed(tree) or tree.args.get("where") is not None:
        return None
    if tree.args.get("distinct") is not None or tree.find(exp.Window, exp.Anonymous, exp.Filter):
        return None
    table = table_name(tree)
    group = tree.args.get("group")
    keys: list[_Key] = []
    if group is not None:
        if any(v for k, v in group.args.items() if k != "expressions"):
            return None  # ROLLUP, CUBE, GROUPING SETS, ALL: more groupings than the keys say
        for expr in group.expressions:
            key = _key(expr, table)
            if key is None:
                return None
            keys.append(key)
        if not keys:
            return None
    extremes: list[tuple[bool, str]] = []
    for node in tree.find_all(exp.AggFunc):
        if not isinstance(node, exp.Max | exp.Min) or node.expressions:
            return None
        column = node.this
        if not is_table_column(column, table):
            return None
        extreme = (isinstance(node, exp.Max), column.name)
        if extreme not in extremes:
            extremes.append(extreme)
    return (keys, extremes) if extremes else None


def _key(expr: exp.Expression, table: str | None) -> _Key | None:
    """A ``GROUP BY`` key as the rule takes it: a column, a member of its structs (``m.qty``),
    or an integer cast of a column; None for anything else."""
    if isinstance(expr, exp.Cast):
        to = _INTEGERS.get(expr.to.sql("spark"))
        if expr.args.get("safe") or to is None or not is_table_column(expr.this, table):
            return None
        return _Key(expr, (expr.this.name,), to)
    path = key_path(expr, table)
    return None if path is None else _Key(expr, tuple(path), None)


def _bounds(
    rows: Mapping[tuple[str, ...], Any], keys: Sequence[_Key], extremes: Sequence[tuple[bool, str]]
) -> tuple[list[exp.Expression], list[exp.Expression]] | None:
    """Each extreme's bound as a literal and the keys of the groups seen (as literals, tuples of
    them for several keys), by the module's rules; None where the sample says nothing."""
    columns: dict[str, Any] = {}
    for i, key in enumerate(keys):
        values = rows[key.path]
        if key.cast is not None:
            values = _integer_cast(values, key.cast)
            if values is None:
                return None
        columns[f"k{i}"] = values
    for j, (_, column) in enumerate(extremes):
        columns[f"x{j}"] = rows[(column,)]
    if not all(_comparable(v.type) for v in columns.values()):
        return None
    data = pa.table(columns)
    key_names = [f"k{i}" for i in range(len(keys))]
    aggregates = [(f"x{j}", "max" if m else "min") for j, (m, _) in enumerate(extremes)]
    if key_names:
        groups = data.group_by(key_names).aggregate(aggregates)
    else:
        groups = pa.table({f"{c}_{fn}": [getattr(pc, fn)(data[c]).as_py()] for c, fn in aggregates})
    seen = [
        row
        for row in groups.to_pylist()
        if all(row[k] is not None for k in key_names)
        and all(row[f"{c}_{fn}"] is not None for c, fn in aggregates)
    ]
    if not seen or len(seen) > MAX_KEYS:
        return None
    limits = [
        _literal((min if fn == "max" else max)(row[f"{c}_{fn}"] for row in seen))
        for c, fn in aggregates
    ]
    listed: list[exp.Expression] = []
    for row in seen:
        values = [_literal(row[k]) for k in key_names]
        listed.append(values[0] if len(values) == 1 else exp.Tuple(expressions=values))
    return limits, listed


def _integer_cast(values: Any, to: pa.DataType | None) -> Any:
    """Integers cast to the integer type ``to`` as Spark casts them; None where ``to`` is
    none, the values are not integers (Spark's cast of text reads more than pyarrow's does) or
    one is out of ``to``'s range (pyarrow's cast is safe: it fails)."""
    if to is None or not pa.types.is_integer(values.type):
        return None
    try:
        return pc.cast(values, to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _comparable(t: pa.DataType) -> bool:
    """Whether pyarrow and Spark order and group values of ``t`` alike: integers, and text by
    its UTF-8 bytes."""
    return pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)


def _literal(value: Any) -> exp.Expression:
    """An integer or a string as a Spark literal."""
    if isinstance(value, str):
        return exp.Literal.string(value)
    return exp.Literal.number(int(value))
