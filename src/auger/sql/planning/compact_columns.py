"""``columns[n]`` of a headerless text file, delivered to Spark as plain string columns.

Drill's ``columns`` array runs up to the highest position a query names, the positions it does
not name being "". A query that only ever says ``columns[2]`` and ``columns[9]`` would still have
Spark receive, convert and copy a ten-element array per row, which costs more than reading
the fields. When every use of ``columns`` in the query is an index (the scan's projection says
so: no bare ``columns``, no ``*``), the scan instead delivers one nullable VARCHAR column per
named position (``__columns_2``, ``__columns_9``: the field, or NULL where the row is shorter),
and a select over the scan rebuilds ``columns`` as an array of those columns with "" in the
other positions. Spark folds ``array(...)[9]`` back to ``__columns_9`` when it optimises the
query, so the array is never built, and ``columns[n]`` reads exactly what Drill's array gives:
the field, "" for a position not named (unobservable here), NULL past the end of the row.

Spark cannot always fold the array away (an aggregate over ``columns[2]`` grouped by
``columns[3]`` keeps it), so a query of one SELECT over one table, where every ``columns``
must be that table's, also has its ``columns[n]`` read from ``__columns_<n>`` directly.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from sqlglot import exp

from auger.formats.text.positions import compact_name
from auger.scan.spec import ColumnSource
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

if TYPE_CHECKING:
    from auger.scan.plan import PlannedScan

__all__ = ["compact_columns_scan", "read_positions_directly"]

_INDEX_PATH = re.compile(r"^`?columns`?\s*\[\s*(\d+)\s*\]$", re.IGNORECASE)
#: beyond this position the rebuilt array would be a long list of "" literals: keep the array
_MAX_POSITION = 256


def compact_columns_scan(planned: PlannedScan) -> tuple[PlannedScan, set[int]] | None:
    """The planned scan with ``columns`` split into its named positions, and those positions;
    None when the query uses ``columns`` otherwise than by literal index (or the scan is not
    of that kind)."""
    spec = planned.spec
    if spec.format_type != "text" or spec.reader_schema:
        return None
    column = planned.schema.column("columns")
    if column is None or column.mode != DataMode.REPEATED:
        return None
    if spec.sources.get(column.name) != ColumnSource.TABLE:
        return None
    positions: set[int] = set()
    for path in spec.projection:
        m = _INDEX_PATH.match(path.strip())
        if m is not None:
            positions.add(int(m.group(1)))
        elif path.split("[", 1)[0].split(".", 1)[0].strip("` ").lower() == "columns":
            return None  # the array itself (or columns.x) is used
        elif path == "*":
            return None
    if not positions or max(positions) > _MAX_POSITION:
        return None
    ordered = sorted(positions)
    schema = TupleSchema()
    sources = {}
    projection = []
    selects = []
    for col in planned.schema:
        if col is column:
            for pos in ordered:
                name = compact_name(pos)
                schema.add(ColumnMetadata(name, MinorType.VARCHAR, DataMode.OPTIONAL))
                sources[name] = ColumnSource.TABLE
                projection.append(name)
            slots = [
                f"`{compact_name(p)}`" if p in positions else "''" for p in range(ordered[-1] + 1)
            ]
            selects.append(f"array({', '.join(slots)}) AS `{column.name}`")
            selects += [f"`{compact_name(p)}`" for p in ordered]
        else:
            schema.add(col)
            sources[col.name] = spec.sources[col.name]
            selects.append(f"`{col.name}`")
    projection += [p for p in spec.projection if not _INDEX_PATH.match(p.strip())]
    new_spec = replace(
        spec, output_schema=schema.to_text(), sources=sources, projection=tuple(projection)
    )
    return replace(planned, spec=new_spec, schema=schema, selects=tuple(selects)), positions


def read_positions_directly(tree: exp.Expression, positions: set[int]) -> exp.Expression:
    """``get(columns, n)`` → ``__columns_<n>`` in a query that is one SELECT over the one
    compacted table (anything with another scope could hold another ``columns``). Runs after
    Drill's output names are set, so an unaliased ``columns[n]`` is still ``EXPR$<i>``."""
    if not isinstance(tree, exp.Select) or not positions:
        return tree
    if tree.find(exp.Subquery, exp.With, exp.Lateral, exp.SetOperation, exp.Join):
        return tree

    def fix(node: exp.Expression) -> exp.Expression:
        if (
            isinstance(node, exp.Anonymous)
            and node.name.lower() == "get"
            and len(node.expressions) == 2
        ):
            arr, idx = node.expressions
            if (
                isinstance(arr, exp.Column)
                and arr.name.lower() == "columns"
                and isinstance(idx, exp.Literal)
                and idx.is_int
                and int(idx.name) in positions
            ):
                col = exp.column(exp.to_identifier(compact_name(int(idx.name)), quoted=True))
                if arr.table:
                    col.set("table", exp.to_identifier(arr.table, quoted=True))
                return col
        return node

    return tree.transform(fix)
