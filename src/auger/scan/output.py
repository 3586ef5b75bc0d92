"""Output assembly: merge the reader's batch, the implicit columns and the missing columns into
one Arrow batch in the scan's output order.

Each source is a batch (or a name → array mapping) holding some of the output columns. A column
comes from the first source that has it; a map may be split across sources (the reader's ``m{x}``
and the missing ``m{y}``), in which case its members are merged, recursively, into the output's
member order. An empty output schema (``COUNT(*)``) still carries the row count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

import pyarrow as pa

from auger.scan.conflicts import ScanStateError
from auger.types import ColumnMetadata, TupleSchema
from auger.types.arrow import column_to_arrow, field_to_arrow

__all__ = ["Source", "assemble"]

Source: TypeAlias = pa.RecordBatch | pa.Table | Mapping[str, pa.Array]


def _columns_of(source: Source) -> dict[str, pa.Array]:
    if isinstance(source, pa.Table):
        return {
            name.lower(): source.column(i).combine_chunks()
            for i, name in enumerate(source.schema.names)
        }
    if isinstance(source, pa.RecordBatch):
        return {name.lower(): source.column(i) for i, name in enumerate(source.schema.names)}
    return {name.lower(): arr for name, arr in source.items()}


def _merge_column(col: ColumnMetadata, parts: list[pa.Array]) -> pa.Array:
    target = column_to_arrow(col)
    if len(parts) == 1 and not col.is_map:
        arr = parts[0]
        return arr if arr.type == target else arr.cast(target)
    if not col.is_map or col.is_array:
        # Only (non-repeated) maps can be split across sources; take the first otherwise.
        arr = parts[0]
        return arr if arr.type == target else arr.cast(target)
    members: list[pa.Array] = []
    by_name = [
        {p.type.field(i).name.lower(): p.field(i) for i in range(p.type.num_fields)} for p in parts
    ]
    for kid in col.children or ():
        kid_parts = [m[kid.name.lower()] for m in by_name if kid.name.lower() in m]
        if not kid_parts:
            raise ScanStateError(f"No source provides map member `{col.name}`.`{kid.name}`")
        members.append(_merge_column(kid, kid_parts))
    fields = [field_to_arrow(k) for k in col.children or ()]
    if not fields:
        return parts[0]
    # Keep the reader's nulls for an OPTIONAL map (the first part that can have any).
    mask = None
    if parts[0].null_count:
        mask = parts[0].is_null()
    return pa.StructArray.from_arrays(members, fields=fields, mask=mask)


def assemble(
    schema: TupleSchema | Sequence[ColumnMetadata],
    sources: Sequence[Source],
    row_count: int | None = None,
) -> pa.RecordBatch:
    """Build the output batch.

    Args:
        schema: the scan output schema (``tracker.output_schema()``).
        sources: reader batch, implicit columns, missing columns... (first wins per column).
        row_count: rows in the batch; needed when no source has a column (``COUNT(*)``).

    Raises:
        ScanStateError: an output column no source provides, or sources of unequal length.
    """
    cols = list(schema)
    maps = [_columns_of(s) for s in sources]
    lengths = {len(a) for m in maps for a in m.values()}
    if row_count is None:
        row_count = max(
            [len(a) for m in maps for a in m.values()]
            + [s.num_rows for s in sources if isinstance(s, pa.RecordBatch | pa.Table)],
            default=0,
        )
    if lengths - {row_count}:
        raise ScanStateError(f"Scan sources disagree on the row count: {sorted(lengths)}")
    if not cols:
        # A batch with rows and no columns: Arrow needs a struct to carry the count.
        return pa.RecordBatch.from_struct_array(pa.array([{}] * row_count, pa.struct([])))
    arrays = []
    for col in cols:
        parts = [m[col.name.lower()] for m in maps if col.name.lower() in m]
        if not parts:
            raise ScanStateError(f"No source provides output column `{col.name}`")
        arrays.append(_merge_column(col, parts))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema([field_to_arrow(c) for c in cols]))
