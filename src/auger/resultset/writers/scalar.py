"""Scalar column writers: the typed setters and the buffers behind them.

Four storage families cover every scalar type:

* ``FixedWriter``: machine numbers in an ``array.array`` (integers, floats, DATE as days, TIME as
  milliseconds, TIMESTAMP as microseconds).
* ``BitWriter``: booleans, one byte each while writing, packed to bits at harvest.
* ``VarWriter``: VARCHAR and VARBINARY as one ``bytearray`` plus int32 end offsets.
* ``WideWriter``: fixed-width byte strings (decimals, intervals).

Nulls are kept as a sorted list of positions rather than a validity byte per value, so the common
non-null write touches one buffer only; harvest turns the list into Arrow's bitmap with numpy.

Each family comes in two roles. The plain class is *positional*: it writes at the position of its
index (a row, or an element of a repeated map) and fills gaps. The ``Element`` variants are the
values of a scalar array: every write appends one element and advances the array's element index.
``FastIntWriter`` and ``FastVarWriter`` inline the hot path of the most common columns.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from auger.resultset import vectors
from auger.resultset.bulk import (
    bool_bytes,
    coerce,
    fixed_values,
    null_positions,
    var_room,
    var_values,
)
from auger.resultset.convert import TYPECODES, Converter, converter_for, decimal_width
from auger.resultset.exceptions import ConversionError
from auger.resultset.writers.base import ColumnWriter, Index, LoaderHooks
from auger.types import ColumnMetadata, DataMode, MinorType
from auger.types.arrow import column_to_arrow

if TYPE_CHECKING:
    from auger.resultset.writers.array import ArrayWriter

__all__ = [
    "BitWriter",
    "FastIntWriter",
    "FastVarWriter",
    "FixedWriter",
    "ScalarWriter",
    "VarWriter",
    "WideWriter",
    "scalar_writer",
]

_TEMPORAL = (
    MinorType.DATE,
    MinorType.TIME,
    MinorType.TIMESTAMP,
    MinorType.INTERVAL,
    MinorType.INTERVALDAY,
    MinorType.INTERVALYEAR,
)


class ScalarWriter(ColumnWriter):
    """Typed setters over one buffer family; subclasses supply the storage."""

    accessor = "scalar"

    __slots__ = (
        "_conv",
        "_data",
        "_fill_raw",
        "_held",
        "_limit",
        "_n",
        "_nullable",
        "_nulls",
        "_type",
        "_zero",
    )

    def __init__(self, meta: ColumnMetadata, idx: Index, hooks: LoaderHooks) -> None:
        super().__init__(meta, idx, hooks)
        self._conv: Converter = converter_for(meta)
        self._nullable = meta.mode is DataMode.OPTIONAL
        self._type = column_to_arrow(meta.with_mode(DataMode.REQUIRED))
        self._limit = hooks.vector_limit
        self._held: tuple[Any, ...] | None = None
        self._n = 0
        self._nulls: list[int] = []
        self._zero = self._zero_raw()
        self._fill_raw = self._zero if self._nullable else self._default_raw()
        self._fresh()

    # ----- storage primitives (per family)
    def _zero_raw(self) -> Any:
        raise NotImplementedError

    def _fresh(self) -> None:
        raise NotImplementedError

    def _state(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def _install(self, state: tuple[Any, ...]) -> None:
        raise NotImplementedError

    def _room(self, raw: Any) -> bool:
        raise NotImplementedError

    def _append(self, raw: Any) -> None:
        raise NotImplementedError

    def _fill(self, count: int, raw: Any) -> None:
        raise NotImplementedError

    def _cut(self, pos: int) -> None:
        """Drop the stored values at positions ``>= pos`` (nulls handled by the caller)."""
        raise NotImplementedError

    def _tail(self, pos: int) -> tuple[Any, ...]:
        """Remove the values at positions ``>= pos`` and return them as a state from 0."""
        raise NotImplementedError

    def _build(self, n: int, nulls: list[int]) -> pa.Array:
        raise NotImplementedError

    # ----- defaults
    def _default_raw(self) -> Any:
        """The fill value of a REQUIRED column: its ``drill.default`` if it converts, else zero."""
        text = self._meta.default_value
        if text is None:
            return self._zero
        candidates: list[Any] = [text]
        for parse in (int, float):
            try:
                candidates.append(parse(text))
            except ValueError:
                pass
        for candidate in reversed(candidates):
            try:
                return self._conv(candidate)
            except ConversionError:
                continue
        return self._zero

    # ----- positional writing
    def _align(self, pos: int) -> None:
        """Fill the positions before ``pos`` not yet written, or drop those at and after it."""
        n = self._n
        if n < pos:
            if self._nullable:
                self._nulls.extend(range(n, pos))
            self._fill(pos - n, self._fill_raw)
            self._n = pos
        elif n > pos:
            self._truncate(pos)

    def _write(self, raw: Any) -> None:
        pos = self._idx.pos
        if self._n != pos:
            self._align(pos)
        while not self._room(raw):
            # Overflow moves the row to an empty batch; a second failure there raises.
            self._hooks.overflow(self)
            pos = self._idx.pos
            if self._n != pos:
                self._align(pos)
        self._append(raw)
        self._n += 1

    def _not_null(self) -> ConversionError:
        return ConversionError(
            f"Column `{self._meta.name}` is {self._meta.type_string()} and cannot be set to NULL",
            [f"Column: {self._meta.name}"],
        )

    def set_null(self) -> None:
        """Write NULL (only for nullable columns and nullable list elements)."""
        if not self._nullable:
            raise self._not_null()
        pos = self._idx.pos
        if self._n != pos:
            self._align(pos)
        while not self._room(self._zero):
            self._hooks.overflow(self)
            if self._n != self._idx.pos:
                self._align(self._idx.pos)
        self._nulls.append(self._n)
        self._append(self._zero)
        self._n += 1

    # ----- typed setters: all route through the column's lossless converter
    def set(self, value: Any) -> None:
        """Write any Python value the column can hold exactly; ``None`` writes NULL."""
        if value is None:
            self.set_null()
        else:
            self._write(self._conv(value))

    def set_int(self, value: int) -> None:
        self._write(self._conv(value))

    def set_long(self, value: int) -> None:
        self._write(self._conv(value))

    def set_double(self, value: float) -> None:
        self._write(self._conv(value))

    def set_float(self, value: float) -> None:
        self._write(self._conv(value))

    def set_string(self, value: str) -> None:
        self._write(self._conv(value))

    def set_bytes(self, value: bytes) -> None:
        self._write(self._conv(value))

    def set_bool(self, value: bool) -> None:
        self._write(self._conv(value))

    def set_date(self, value: Any) -> None:
        self._write(self._conv(value))

    def set_time(self, value: Any) -> None:
        self._write(self._conv(value))

    def set_timestamp(self, value: Any) -> None:
        self._write(self._conv(value))

    def set_decimal(self, value: Any) -> None:
        self._write(self._conv(value))

    def set_interval(self, value: Any) -> None:
        self._write(self._conv(value))

    # ----- lifecycle
    def _truncate(self, pos: int) -> None:
        if self._n > pos:
            self._cut(pos)
            nulls = self._nulls
            if nulls and nulls[-1] >= pos:
                del nulls[bisect_left(nulls, pos) :]
            self._n = pos

    def _split(self, pos: int) -> None:
        nulls = self._nulls
        cut = bisect_left(nulls, pos)
        tail_nulls = [p - pos for p in nulls[cut:]]
        del nulls[cut:]
        tail = self._tail(pos)
        self._held = self._state()
        self._install(tail)
        self._nulls = tail_nulls

    def _harvest(self, n: int, held: bool) -> pa.Array:
        current: tuple[Any, ...] | None = None
        if held:
            current = self._state()
            assert self._held is not None, "overflow state missing"
            self._install(self._held)
            self._held = None
        if self._n != n:
            self._align(n)
        arr = self._build(n, self._nulls)
        if current is not None:
            self._install(current)
        else:
            self._fresh()
        return arr

    # ----- bulk (Arrow) appends; see auger.resultset.bulk
    def _bulk_room(self, arr: pa.Array) -> int:

        return self._room_for(coerce(self, arr))

    def _bulk_append(self, arr: pa.Array) -> None:

        self._append_arrow(coerce(self, arr))

    def _room_for(self, arr: pa.Array) -> int:
        raise NotImplementedError

    def _append_arrow(self, arr: pa.Array) -> None:
        raise NotImplementedError

    def _bulk_nulls(self, arr: pa.Array) -> None:
        if arr.null_count:
            if not self._nullable:
                raise self._not_null()

            self._nulls.extend(null_positions(arr, self._n))


# --------------------------------------------------------------------------- fixed width


class FixedWriter(ScalarWriter):
    """Numbers in an ``array.array``."""

    __slots__ = ("_cap", "_itemsize", "_typecode")

    def __init__(self, meta: ColumnMetadata, idx: Index, hooks: LoaderHooks) -> None:
        self._typecode = TYPECODES[meta.type]
        self._itemsize = array(self._typecode).itemsize
        self._cap = max(1, hooks.vector_limit // self._itemsize)
        super().__init__(meta, idx, hooks)

    def _zero_raw(self) -> Any:
        return 0.0 if self._typecode in "fd" else 0

    def _fresh(self) -> None:
        self._data = array(self._typecode)
        self._n = 0
        self._nulls = []

    def _state(self) -> tuple[Any, ...]:
        return (self._data, self._nulls, self._n)

    def _install(self, state: tuple[Any, ...]) -> None:
        self._data, self._nulls, self._n = state

    def _room(self, raw: Any) -> bool:
        return len(self._data) < self._cap

    def _append(self, raw: Any) -> None:
        self._data.append(raw)

    def _fill(self, count: int, raw: Any) -> None:
        if raw == 0:
            self._data.frombytes(bytes(count * self._itemsize))
        else:
            self._data.extend(array(self._typecode, [raw]) * count)

    def _cut(self, pos: int) -> None:
        del self._data[pos:]

    def _tail(self, pos: int) -> tuple[Any, ...]:
        data = self._data
        tail = data[pos:]
        del data[pos:]
        count = max(0, self._n - pos)
        self._n = min(self._n, pos)
        return (tail, [], count)

    def _build(self, n: int, nulls: list[int]) -> pa.Array:
        if self._meta.type is MinorType.NULL:
            return pa.nulls(n)
        return vectors.fixed_array(self._type, n, self._data, nulls)

    def _nbytes(self) -> int:
        return len(self._data) * self._itemsize + (len(self._data) + 7) // 8 * self._nullable

    def _room_for(self, arr: pa.Array) -> int:
        return max(0, self._cap - len(self._data))

    def _append_arrow(self, arr: pa.Array) -> None:

        self._bulk_nulls(arr)
        self._data.frombytes(fixed_values(arr, self._itemsize))
        self._n += len(arr)


class FastIntWriter(FixedWriter):
    """Integer columns with an inlined ``set_int``: one comparison and one append per value."""

    __slots__ = ()

    def set_int(self, value: int) -> None:
        if self._n != self._idx.pos:
            self._align(self._idx.pos)
        data = self._data
        if len(data) >= self._cap:
            self._write(self._conv(value))
            return
        try:
            data.append(value)
        except (TypeError, OverflowError):
            self._write(self._conv(value))
            return
        self._n += 1

    set_long = set_int

    def set(self, value: Any) -> None:
        if value is None:
            self.set_null()
        elif type(value) is int:
            self.set_int(value)
        else:
            self._write(self._conv(value))


class FastFloatWriter(FixedWriter):
    """FLOAT8 columns with an inlined ``set_double`` for Python floats."""

    __slots__ = ()

    def set_double(self, value: float) -> None:
        if type(value) is not float:
            self._write(self._conv(value))
            return
        if self._n != self._idx.pos:
            self._align(self._idx.pos)
        data = self._data
        if len(data) >= self._cap:
            self._write(value)
            return
        data.append(value)  # type: ignore[arg-type]  # a "d" array holds floats
        self._n += 1

    def set(self, value: Any) -> None:
        if type(value) is float:
            self.set_double(value)
        elif value is None:
            self.set_null()
        else:
            self._write(self._conv(value))


# --------------------------------------------------------------------------- booleans


class BitWriter(ScalarWriter):
    """Booleans, one byte per value until harvest packs them."""

    __slots__ = ("_cap",)

    def __init__(self, meta: ColumnMetadata, idx: Index, hooks: LoaderHooks) -> None:
        self._cap = max(1, hooks.vector_limit * 8)
        super().__init__(meta, idx, hooks)

    def _zero_raw(self) -> Any:
        return 0

    def _fresh(self) -> None:
        self._data = bytearray()
        self._n = 0
        self._nulls = []

    def _state(self) -> tuple[Any, ...]:
        return (self._data, self._nulls, self._n)

    def _install(self, state: tuple[Any, ...]) -> None:
        self._data, self._nulls, self._n = state

    def _room(self, raw: Any) -> bool:
        return len(self._data) < self._cap

    def _append(self, raw: Any) -> None:
        self._data.append(raw)

    def _fill(self, count: int, raw: Any) -> None:
        self._data.extend(bytes([raw]) * count)

    def _cut(self, pos: int) -> None:
        del self._data[pos:]

    def _tail(self, pos: int) -> tuple[Any, ...]:
        data = self._data
        tail = data[pos:]
        del data[pos:]
        count = max(0, self._n - pos)
        self._n = min(self._n, pos)
        return (tail, [], count)

    def _build(self, n: int, nulls: list[int]) -> pa.Array:
        bits = vectors.bits_from_bytes(self._data, n)
        return pa.Array.from_buffers(
            pa.bool_(), n, [vectors.validity_bitmap(n, nulls), bits], len(nulls)
        )

    def _nbytes(self) -> int:
        return (len(self._data) + 7) // 8 * (1 + self._nullable)

    def _room_for(self, arr: pa.Array) -> int:
        return max(0, self._cap - len(self._data))

    def _append_arrow(self, arr: pa.Array) -> None:

        self._bulk_nulls(arr)
        self._data += bool_bytes(arr)
        self._n += len(arr)


# --------------------------------------------------------------------------- variable width


class VarWriter(ScalarWriter):
    """VARCHAR and VARBINARY: value bytes plus int32 end offsets (Arrow's layout)."""

    __slots__ = ("_ocap", "_offsets")

    def __init__(self, meta: ColumnMetadata, idx: Index, hooks: LoaderHooks) -> None:
        # The offsets are a vector too: n values need n + 1 four-byte entries.
        self._ocap = max(1, hooks.vector_limit // 4 - 1)
        super().__init__(meta, idx, hooks)

    def _zero_raw(self) -> Any:
        return b""

    def _fresh(self) -> None:
        self._data = bytearray()
        self._offsets = array("i", [0])
        self._n = 0
        self._nulls = []

    def _state(self) -> tuple[Any, ...]:
        return (self._data, self._offsets, self._nulls, self._n)

    def _install(self, state: tuple[Any, ...]) -> None:
        self._data, self._offsets, self._nulls, self._n = state

    def _room(self, raw: Any) -> bool:
        return len(self._data) + len(raw) <= self._limit and self._n < self._ocap

    def _append(self, raw: Any) -> None:
        data = self._data
        data += raw
        self._offsets.append(len(data))

    def _fill(self, count: int, raw: Any) -> None:
        if not raw:
            self._offsets.extend(array("i", [len(self._data)]) * count)
            return
        for _ in range(count):
            self._append(raw)

    def _cut(self, pos: int) -> None:
        del self._data[self._offsets[pos] :]
        del self._offsets[pos + 1 :]

    def _tail(self, pos: int) -> tuple[Any, ...]:
        if self._n <= pos:
            return (bytearray(), array("i", [0]), [], 0)
        offsets = self._offsets
        start = offsets[pos]
        tail_data = self._data[start:]
        tail_offsets = array("i", [o - start for o in offsets[pos:]])
        del self._data[start:]
        del offsets[pos + 1 :]
        count = self._n - pos
        self._n = pos
        return (tail_data, tail_offsets, [], count)

    def _build(self, n: int, nulls: list[int]) -> pa.Array:
        return vectors.var_array(self._type, n, self._offsets, self._data, nulls)

    def _nbytes(self) -> int:
        return len(self._data) + 4 * len(self._offsets) + (self._n + 7) // 8 * self._nullable

    def _room_for(self, arr: pa.Array) -> int:

        return min(var_room(arr, self._limit - len(self._data)), max(0, self._ocap - self._n))

    def _append_arrow(self, arr: pa.Array) -> None:

        self._bulk_nulls(arr)
        data = self._data
        offsets, values = var_values(arr, len(data))
        data += values
        self._offsets.frombytes(offsets)
        self._n += len(arr)


class FastVarWriter(VarWriter):
    """VARCHAR/VARBINARY with inlined ``set_string`` and ``set_bytes``."""

    __slots__ = ()

    def set_string(self, value: str) -> None:
        if self._n != self._idx.pos:
            self._align(self._idx.pos)
        try:
            raw = value.encode()
        except (AttributeError, UnicodeEncodeError):
            self._write(self._conv(value))
            return
        data = self._data
        if len(data) + len(raw) > self._limit or self._n >= self._ocap:
            self._write(self._conv(value))
            return
        data += raw
        self._offsets.append(len(data))
        self._n += 1

    def set(self, value: Any) -> None:
        if type(value) is str:
            self.set_string(value)
        elif value is None:
            self.set_null()
        else:
            self._write(self._conv(value))


# --------------------------------------------------------------------------- fixed byte width


class WideWriter(ScalarWriter):
    """Decimals and intervals: fixed-width little-endian byte strings in one ``bytearray``."""

    __slots__ = ("_width",)

    def __init__(self, meta: ColumnMetadata, idx: Index, hooks: LoaderHooks) -> None:
        self._width = decimal_width(meta) if meta.type is MinorType.VARDECIMAL else 16
        super().__init__(meta, idx, hooks)

    def _zero_raw(self) -> Any:
        return bytes(self._width)

    def _fresh(self) -> None:
        self._data = bytearray()
        self._n = 0
        self._nulls = []

    def _state(self) -> tuple[Any, ...]:
        return (self._data, self._nulls, self._n)

    def _install(self, state: tuple[Any, ...]) -> None:
        self._data, self._nulls, self._n = state

    def _room(self, raw: Any) -> bool:
        return len(self._data) + self._width <= self._limit

    def _append(self, raw: Any) -> None:
        self._data += raw

    def _fill(self, count: int, raw: Any) -> None:
        self._data += raw * count

    def _cut(self, pos: int) -> None:
        del self._data[pos * self._width :]

    def _tail(self, pos: int) -> tuple[Any, ...]:
        data = self._data
        tail = data[pos * self._width :]
        del data[pos * self._width :]
        count = max(0, self._n - pos)
        self._n = min(self._n, pos)
        return (tail, [], count)

    def _build(self, n: int, nulls: list[int]) -> pa.Array:
        return vectors.fixed_array(self._type, n, self._data, nulls)

    def _nbytes(self) -> int:
        return len(self._data) + (self._n + 7) // 8 * self._nullable

    def _room_for(self, arr: pa.Array) -> int:
        return max(0, (self._limit - len(self._data)) // self._width)

    def _append_arrow(self, arr: pa.Array) -> None:

        self._bulk_nulls(arr)
        self._data += fixed_values(arr, self._width)
        self._n += len(arr)


# --------------------------------------------------------------------------- array elements


class _ElementMixin:
    """Makes a scalar writer append the elements of a scalar array.

    Each write first brings the owning array up to the current row (closing earlier rows), then
    appends at the array's element index and advances it: a scalar element needs no ``save()``.
    """

    __slots__ = ()
    _owner: ArrayWriter

    def _write(self: Any, raw: Any, null: bool = False) -> None:
        owner = self._owner
        if owner._n != owner._idx.pos:
            owner._sync()
        if self._n != self._idx.pos:
            self._align(self._idx.pos)
        while not self._room(raw):
            self._hooks.overflow(self)
            if owner._n != owner._idx.pos:
                owner._sync()
            if self._n != self._idx.pos:
                self._align(self._idx.pos)
        if null:
            self._nulls.append(self._n)
        self._append(raw)
        self._n += 1
        self._idx.pos += 1

    def set_null(self: Any) -> None:
        if not self._nullable:
            raise ConversionError(
                f"Array `{self._meta.name}` cannot hold NULL elements",
                [f"Column: {self._meta.name}"],
            )
        self._write(self._zero, True)


class ElementFixedWriter(_ElementMixin, FixedWriter):
    __slots__ = ("_owner",)


class ElementBitWriter(_ElementMixin, BitWriter):
    __slots__ = ("_owner",)


class ElementVarWriter(_ElementMixin, VarWriter):
    __slots__ = ("_owner",)


class ElementWideWriter(_ElementMixin, WideWriter):
    __slots__ = ("_owner",)


_POSITIONAL: dict[str, type[ScalarWriter]] = {
    "fixed": FixedWriter,
    "bit": BitWriter,
    "var": VarWriter,
    "wide": WideWriter,
}
_ELEMENT: dict[str, type[ScalarWriter]] = {
    "fixed": ElementFixedWriter,
    "bit": ElementBitWriter,
    "var": ElementVarWriter,
    "wide": ElementWideWriter,
}
_FAMILY: dict[MinorType, str] = {
    **{t: "fixed" for t in TYPECODES},
    MinorType.BIT: "bit",
    MinorType.VARCHAR: "var",
    MinorType.VARBINARY: "var",
    MinorType.UNION: "var",
    MinorType.VARDECIMAL: "wide",
    MinorType.INTERVAL: "wide",
    MinorType.INTERVALDAY: "wide",
    MinorType.INTERVALYEAR: "wide",
}


def scalar_writer(
    meta: ColumnMetadata, idx: Index, hooks: LoaderHooks, owner: ArrayWriter | None = None
) -> ScalarWriter:
    """The writer for one scalar column, or for the elements of a scalar array (``owner``)."""
    family = _FAMILY.get(meta.type)
    if family is None:
        raise TypeError(f"no scalar writer rule for Drill type {meta.type.value}")
    if owner is not None:
        writer = _ELEMENT[family](meta, idx, hooks)
        writer._owner = owner  # type: ignore[attr-defined]
        return writer
    cls = _POSITIONAL[family]
    if meta.type in (MinorType.TINYINT, MinorType.SMALLINT, MinorType.INT, MinorType.BIGINT):
        cls = FastIntWriter
    elif meta.type is MinorType.FLOAT8:
        cls = FastFloatWriter
    elif meta.type in (MinorType.VARCHAR, MinorType.VARBINARY):
        cls = FastVarWriter
    return cls(meta, idx, hooks)


def is_temporal(meta: ColumnMetadata) -> bool:
    """Types with no sensible zero to back-fill earlier rows with (Drill's rule)."""
    return meta.type in _TEMPORAL
