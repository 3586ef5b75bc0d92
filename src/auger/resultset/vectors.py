"""From writer buffers to Arrow arrays, without touching values one by one.

Writers keep growable Python buffers (``array.array``, ``bytearray``) plus, for nullable columns,
the list of positions set to null. Harvest hands those buffers to Arrow as they are
(``pyarrow.py_buffer`` shares the memory) and builds the validity bitmap with numpy, so the cost
of a harvest does not grow with the number of Python objects written.

Once a buffer is shared with Arrow it is frozen (Python forbids resizing an exported buffer), so a
writer always starts the next batch with fresh buffers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = [
    "bits_from_bytes",
    "fixed_array",
    "list_array",
    "struct_array",
    "validity_bitmap",
    "var_array",
]


def validity_bitmap(length: int, nulls: Sequence[int]) -> pa.Buffer | None:
    """Arrow's validity bitmap with the ``nulls`` positions cleared; ``None`` when all valid."""
    if not nulls:
        return None
    valid = np.ones(length, dtype=np.bool_)
    valid[np.asarray(nulls, dtype=np.int64)] = False
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def bits_from_bytes(values: bytes | bytearray, length: int) -> pa.Buffer:
    """Pack one byte per boolean (0 or 1) into Arrow's bit-per-value layout."""
    arr = np.frombuffer(values, dtype=np.uint8, count=length)
    return pa.py_buffer(np.packbits(arr, bitorder="little"))


def fixed_array(arrow_type: pa.DataType, length: int, data: Any, nulls: Sequence[int]) -> pa.Array:
    """A fixed-width array over ``data`` (any buffer-protocol object)."""
    return pa.Array.from_buffers(
        arrow_type, length, [validity_bitmap(length, nulls), pa.py_buffer(data)], len(nulls)
    )


def var_array(
    arrow_type: pa.DataType, length: int, offsets: Any, data: Any, nulls: Sequence[int]
) -> pa.Array:
    """A string or binary array over int32 ``offsets`` and the value bytes ``data``."""
    return pa.Array.from_buffers(
        arrow_type,
        length,
        [validity_bitmap(length, nulls), pa.py_buffer(offsets), pa.py_buffer(data)],
        len(nulls),
    )


def list_array(
    arrow_type: pa.DataType, length: int, offsets: Any, child: pa.Array, nulls: Sequence[int]
) -> pa.Array:
    """A list (or map) array over int32 ``offsets`` and the already built ``child``."""
    return pa.Array.from_buffers(
        arrow_type,
        length,
        [validity_bitmap(length, nulls), pa.py_buffer(offsets)],
        len(nulls),
        children=[child],
    )


def struct_array(
    arrow_type: pa.DataType, length: int, children: list[pa.Array], nulls: Sequence[int]
) -> pa.Array:
    """A struct array over its members' arrays."""
    return pa.Array.from_buffers(
        arrow_type, length, [validity_bitmap(length, nulls)], len(nulls), children=children
    )
