"""The bulk path: whole Arrow batches through the same limits as row-by-row writes.

Arrow-native readers (Parquet, or any reader built on pyarrow) already hold their data as Arrow
arrays. ``RowSetLoader.append_arrow`` takes such a batch, works out with numpy how many leading
rows fit under the row limit, every vector's size limit and the batch budget, and copies that
many rows into the writers' buffers with whole-buffer copies (``frombytes``, ``bytearray +=``),
never value by value. The rows that do not fit wait in the loader and flow into the next batches
as they are started, so a reader can hand over a batch of any size in one call.

A batch that needs no writer at all (a scan's reader batch, already in the output's types) takes
the same limits without a copy: :func:`rows_within_limits` measures, from the offsets alone, how
many leading rows keep every buffer within the vector limit and the whole within the batch
budget, and ``ResultSetLoader.arrow_batches`` hands out zero-copy slices of that many rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from auger.resultset.exceptions import ConversionError
from auger.types import DataMode
from auger.types.arrow import arrow_to_column, column_to_arrow

if TYPE_CHECKING:
    from auger.resultset.writers.base import ColumnWriter
    from auger.resultset.writers.tuple import TupleWriter

__all__ = [
    "align",
    "array_room",
    "bool_bytes",
    "coerce",
    "fixed_values",
    "list_parts",
    "null_positions",
    "rebased",
    "rows_within",
    "rows_within_budget",
    "rows_within_limits",
    "struct_fields",
    "var_room",
    "var_values",
]


def coerce(writer: ColumnWriter, arr: pa.Array) -> pa.Array:
    """Cast ``arr`` to the writer's Arrow type if it differs, refusing lossy casts."""
    target = column_to_arrow(writer.metadata.with_mode(DataMode.REQUIRED))
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if arr.type == target:
        return arr
    try:
        return arr.cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ConversionError(
            f"Cannot store Arrow {arr.type} values in column `{writer.name}` of type "
            f"{writer.metadata.type_string()} without loss",
            [f"Column: {writer.name}", str(exc).splitlines()[0]],
        ) from exc


def align(writer: Any) -> None:
    """Bring a writer up to its index position before appending after it."""
    if hasattr(writer, "_sync"):
        if writer._n != writer._idx.pos:
            writer._sync()
    elif hasattr(writer, "_align") and writer._n != writer._idx.pos:
        writer._align(writer._idx.pos)


def null_positions(arr: pa.Array, base: int) -> list[int]:
    """Positions of the nulls of ``arr``, shifted by ``base``."""
    mask = arr.is_null().to_numpy(zero_copy_only=False)
    return (np.flatnonzero(mask) + base).tolist()  # type: ignore[no-any-return]


def fixed_values(arr: pa.Array, width: int) -> memoryview:
    """The value bytes of a fixed-width array, honouring its slice offset."""
    buf = arr.buffers()[1]
    start = arr.offset * width
    return memoryview(buf)[start : start + len(arr) * width]  # type: ignore[arg-type]


def bool_bytes(arr: pa.Array) -> bytes:
    """One byte (0 or 1) per value of a boolean array."""
    buf = arr.buffers()[1]
    if buf is None or len(arr) == 0:
        return bytes(len(arr))
    bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little")
    return bits[arr.offset : arr.offset + len(arr)].tobytes()  # type: ignore[no-any-return]


def _offsets(arr: pa.Array) -> np.ndarray:
    width = (
        np.int64
        if pa.types.is_large_string(arr.type)
        or pa.types.is_large_binary(arr.type)
        or pa.types.is_large_list(arr.type)
        else np.int32
    )
    buf = arr.buffers()[1]
    if buf is None:
        return np.zeros(len(arr) + 1, dtype=np.int64)
    return np.frombuffer(buf, dtype=width)[arr.offset : arr.offset + len(arr) + 1].astype(np.int64)


def var_room(arr: pa.Array, space: int) -> int:
    """How many leading values of a string/binary array fit into ``space`` bytes."""
    offs = _offsets(arr)
    return int(np.searchsorted(offs[1:] - offs[0], space, side="right"))


def var_values(arr: pa.Array, base: int) -> tuple[bytes, memoryview]:
    """The rebased int32 end offsets (as bytes) and the value bytes of a string/binary array."""
    offs = _offsets(arr)
    data = arr.buffers()[2]
    start, end = int(offs[0]), int(offs[-1])
    values = memoryview(data)[start:end] if data is not None else memoryview(b"")  # type: ignore[arg-type]
    ends = (offs[1:] - start + base).astype(np.int32)
    return ends.tobytes(), values


def list_parts(arr: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Offsets (len + 1, int64) and the referenced slice of the values of a list/map array."""
    offs = _offsets(arr)
    start, end = int(offs[0]), int(offs[-1])
    return offs, arr.values.slice(start, end - start)


def rows_within(offsets: np.ndarray, element_room: int) -> int:
    """How many leading lists fit when at most ``element_room`` elements fit."""
    return int(np.searchsorted(offsets[1:] - offsets[0], element_room, side="right"))


def rebased(offsets: np.ndarray, base: int) -> bytes:
    """Offsets shifted to start at ``base``, as int32 bytes."""
    return (offsets - offsets[0] + base).astype(np.int32).tobytes()  # type: ignore[no-any-return]


def struct_fields(writer: TupleWriter, arr: pa.Array) -> list[tuple[ColumnWriter, pa.Array]]:
    """Pair the fields of a struct array with the map's members, adding members it lacks."""
    pairs: list[tuple[ColumnWriter, pa.Array]] = []
    for i, field in enumerate(arr.type):
        if writer.index(field.name) < 0:
            writer.add_column(arrow_to_column(field.name, field.type, field.nullable))
        pairs.append((writer.column(field.name), arr.field(i)))
    return pairs


def array_room(arr: pa.Array, limit: int) -> int:
    """How many leading values of ``arr`` keep each of its buffers (values, offsets, and those of
    its lists' elements and maps' members) within ``limit`` bytes; measured, never copied."""
    t = arr.type
    n = len(arr)
    if n == 0 or pa.types.is_null(t):
        return n
    if isinstance(t, pa.BaseExtensionType):
        return array_room(arr.storage, limit)
    if pa.types.is_dictionary(t):
        return array_room(arr.indices, limit)
    if pa.types.is_boolean(t):
        return min(n, limit * 8)
    if pa.types.is_struct(t):
        room = n
        for i in range(t.num_fields):
            room = min(room, array_room(arr.field(i), limit))  # sliced as the struct is
        return room
    if pa.types.is_fixed_size_list(t):
        size = max(t.list_size, 1)
        values = arr.values.slice(arr.offset * size, n * size)
        return min(n, array_room(values, limit) // size)
    large = pa.types.is_large_string(t) or pa.types.is_large_binary(t) or pa.types.is_large_list(t)
    by_offsets = min(n, limit // (8 if large else 4) - 1)
    if (
        pa.types.is_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_string(t)
        or pa.types.is_large_binary(t)
    ):
        return max(0, min(by_offsets, var_room(arr, limit)))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        offsets, values = list_parts(arr)  # a map's values: its entries, a struct
        return max(0, min(by_offsets, rows_within(offsets, array_room(values, limit))))
    try:
        width = t.bit_width
    except ValueError:  # unions, views: no fixed width; the whole array's size per value
        width = 0
    if width >= 8:
        return min(n, limit // (width // 8))
    return _search(n, lambda k: arr.slice(0, k).nbytes <= limit)


def rows_within_budget(arrays: list[pa.Array], rows: int, used: int, budget: int) -> int:
    """The most leading rows (up to ``rows``) of ``arrays`` whose bytes, added to ``used``,
    stay within ``budget``."""
    return _search(rows, lambda k: used + sum(a.slice(0, k).nbytes for a in arrays) <= budget)


def rows_within_limits(
    batch: pa.RecordBatch, row_limit: int, vector_limit: int, budget: int | None = None
) -> int:
    """How many leading rows of ``batch`` make a batch within the loader's limits: at most
    ``row_limit`` rows, no buffer of any column over ``vector_limit`` bytes, all of them within
    ``budget`` bytes. A batch whose buffers fit whole costs one size check."""
    n = min(batch.num_rows, row_limit)
    if n == 0:
        return 0
    # The buffers' whole sizes bound what the rows use (one call, no walk over the values)
    if batch.get_total_buffer_size() <= min(vector_limit, budget or vector_limit):
        return n
    head = batch.slice(0, n) if n < batch.num_rows else batch
    for column in head.columns:
        n = min(n, array_room(column, vector_limit))
        if n == 0:
            return 0
    if budget is not None:
        n = rows_within_budget(list(head.columns), n, 0, budget)
    return n


def _search(most: int, fits: Callable[[int], bool]) -> int:
    """The largest ``k <= most`` with ``fits(k)`` (``fits`` holds for smaller ``k`` too)."""
    if fits(most):
        return most
    lo, hi = 0, most - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
