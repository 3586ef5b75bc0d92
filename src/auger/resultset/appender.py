"""``append_arrow``: cutting an incoming Arrow batch at the batch limits (see ``bulk``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from auger.resultset.bulk import align, rows_within_budget
from auger.resultset.exceptions import LoaderStateError, oversize_error
from auger.types.arrow import arrow_to_column

if TYPE_CHECKING:
    from auger.resultset.rowset import RowSetLoader
    from auger.resultset.writers.base import ColumnWriter

__all__ = ["append_arrow"]


def append_arrow(rows: RowSetLoader, batch: pa.RecordBatch | pa.Table) -> int:
    """Append as many leading rows of ``batch`` as fit; keep the rest pending in the loader."""
    loader = rows._loader
    if not rows._active:
        raise loader._state_error("append an Arrow batch")
    if rows._open:
        rows._truncate(rows._idx.pos)
        rows._open = False
    if loader._pending is not None:
        raise LoaderStateError(
            "Rows of an earlier append_arrow() are still waiting: harvest() and start_batch() "
            "until loader.has_look_ahead() is False before appending more"
        )
    if isinstance(batch, pa.Table):
        batch = batch.combine_chunks().to_batches()[0] if batch.num_rows else _empty(batch)
    if rows.is_full():
        if batch.num_rows == 0:
            return 0
        raise LoaderStateError("The batch is full: call harvest() and start_batch() first")
    pairs = _pair_columns(rows, batch)
    total = batch.num_rows
    fit = min(total, rows._save_limit - rows._idx.pos)
    for writer, arr in pairs:
        align(writer)
        if fit == 0:
            break
        fit = min(fit, writer._bulk_room(arr.slice(0, fit)))  # type: ignore[attr-defined]
    if loader._budget is not None and fit > 0:
        fit = _within_budget(rows, pairs, fit, loader._budget)
    if fit == 0 and total > 0:
        if rows._idx.pos == 0:
            limit = loader._budget if loader._budget is not None else loader.vector_limit
            raise oversize_error(limit, _widest(pairs))
        loader._bulk_full = True
        loader._pending = batch
        return 0
    for writer, arr in pairs:
        writer._bulk_append(arr.slice(0, fit))  # type: ignore[attr-defined]
    rows._idx.pos += fit
    if fit < total:
        loader._pending = batch.slice(fit)
        loader._bulk_full = True
    return fit


def _empty(table: pa.Table) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array([], type=f.type) for f in table.schema], schema=table.schema
    )


def _pair_columns(rows: RowSetLoader, batch: pa.RecordBatch) -> list[tuple[ColumnWriter, pa.Array]]:
    pairs: list[tuple[ColumnWriter, pa.Array]] = []
    for i, field in enumerate(batch.schema):
        if rows.index(field.name) < 0:
            rows.add_column(arrow_to_column(field.name, field.type, field.nullable))
        writer = rows.column(field.name)
        if writer.is_projected():
            pairs.append((writer, batch.column(i)))
    return pairs


def _within_budget(
    rows: RowSetLoader, pairs: list[tuple[ColumnWriter, pa.Array]], fit: int, budget: int
) -> int:
    """Largest row count whose Arrow size, added to the batch so far, stays within budget."""
    used = sum(c._nbytes() for c in rows._columns)
    return rows_within_budget([arr for _, arr in pairs], fit, used, budget)


def _widest(pairs: list[tuple[ColumnWriter, pa.Array]]) -> str:
    if not pairs:
        return "(row)"
    return max(pairs, key=lambda p: p[1].slice(0, 1).nbytes)[0].name
