"""Arrow scalars built from their bytes, never from Python objects.

pyarrow's first conversion of a Python value (``pa.scalar``, ``pa.array`` of a list, a Python
number handed to a compute function) imports pandas, to ask whether the value is a pandas
object. A Spark worker that scans or caches raw files never needs pandas: importing it costs a
fresh worker a quarter second, more than its whole scan of a small file, and 35-40 MB of memory
for as long as the worker lives (a build of 2 GB of JSON lines peaked at 251-279 MB per worker
with pandas loaded, 35 MB less without). The scan and the cache builds make the few constants
they need here.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Sequence

import pyarrow as pa

__all__ = ["integer_array", "integer_scalar", "null_scalar", "text_array", "text_scalar"]

_INTEGER_FORMATS = {8: "<b", 16: "<h", 32: "<i", 64: "<q"}


def text_array(texts: Sequence[str]) -> pa.Array:
    """``texts`` as an Arrow string array."""
    data = [t.encode("utf-8") for t in texts]
    ends = list(itertools.accumulate((len(d) for d in data), initial=0))
    offsets = pa.py_buffer(struct.pack(f"<{len(ends)}i", *ends))
    return pa.Array.from_buffers(
        pa.string(), len(data), [None, offsets, pa.py_buffer(b"".join(data))]
    )


def text_scalar(text: str | None, dst: pa.DataType) -> pa.Scalar:
    """``text`` as an Arrow scalar of ``dst`` (a string type, or one a string casts to); None
    is NULL."""
    if text is None:
        return null_scalar(dst)
    return text_array([text]).cast(dst)[0]


def integer_array(values: Sequence[int]) -> pa.Array:
    """``values`` as an Arrow ``int64`` array (no NULL)."""
    data = pa.py_buffer(struct.pack(f"<{len(values)}q", *values))
    return pa.Array.from_buffers(pa.int64(), len(values), [None, data])


def integer_scalar(value: int, dst: pa.DataType) -> pa.Scalar:
    """``value`` as an Arrow scalar of the signed integer type ``dst``."""
    if not pa.types.is_signed_integer(dst):
        raise TypeError(f"integer_scalar needs a signed integer type, not {dst}")
    data = pa.py_buffer(struct.pack(_INTEGER_FORMATS[dst.bit_width], value))
    return pa.Array.from_buffers(dst, 1, [None, data])[0]


def null_scalar(dst: pa.DataType) -> pa.Scalar:
    """A NULL scalar of ``dst``."""
    return pa.nulls(1, dst)[0]
