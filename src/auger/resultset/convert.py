"""Lossless conversion of Python values into the raw form each column type stores.

Every scalar column keeps its values in a compact buffer: integers, floats, dates, times and
timestamps as machine numbers in an ``array.array``; strings and binaries as bytes; decimals and
intervals as fixed-width little-endian byte strings. A converter turns one Python value into that
raw form, or raises ``ConversionError`` when the value would change on the way (a fraction into
an INT, a 2**40 into an INT, a non-UTF-8 byte string into VARCHAR). Writers call the converters
only off their fast path, so clarity wins over speed here.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import numbers
import struct
from collections.abc import Callable
from typing import Any

from auger.resultset.exceptions import ConversionError
from auger.types import ColumnMetadata, MinorType

__all__ = [
    "INT_RANGES",
    "TYPECODES",
    "Converter",
    "converter_for",
    "decimal_width",
]

Converter = Callable[[Any], Any]

# array.array type code for the columns stored as machine numbers.
TYPECODES: dict[MinorType, str] = {
    MinorType.TINYINT: "b",
    MinorType.SMALLINT: "h",
    MinorType.INT: "i",
    MinorType.BIGINT: "q",
    MinorType.FLOAT4: "f",
    MinorType.FLOAT8: "d",
    MinorType.DATE: "i",
    MinorType.TIME: "i",
    MinorType.TIMESTAMP: "q",
    MinorType.LATE: "i",
    MinorType.NULL: "i",
}

INT_RANGES: dict[MinorType, tuple[int, int]] = {
    MinorType.TINYINT: (-(2**7), 2**7 - 1),
    MinorType.SMALLINT: (-(2**15), 2**15 - 1),
    MinorType.INT: (-(2**31), 2**31 - 1),
    MinorType.BIGINT: (-(2**63), 2**63 - 1),
    MinorType.LATE: (-(2**31), 2**31 - 1),
    MinorType.NULL: (-(2**31), 2**31 - 1),
}

_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MS_PER_DAY = 86_400_000
_INTERVALS = (MinorType.INTERVAL, MinorType.INTERVALDAY, MinorType.INTERVALYEAR)


def decimal_width(col: ColumnMetadata) -> int:
    """Bytes per decimal value: decimal128 up to precision 38, decimal256 beyond."""
    return 32 if (col.precision or 38) > 38 else 16


def _fail(col: ColumnMetadata, value: Any, why: str = "") -> ConversionError:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    reason = f": {why}" if why else ""
    return ConversionError(
        f"Cannot store {shown} ({type(value).__name__}) in column `{col.name}` of type "
        f"{col.type.value} without loss{reason}",
        [f"Column: {col.name}", f"Type: {col.type_string()}"],
    )


def _integral(col: ColumnMetadata, value: Any) -> int:
    """An exact integer from an int, a whole float or a whole Decimal."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, decimal.Decimal) and value.is_finite() and value == value.to_integral():
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, float | decimal.Decimal):
        as_float = float(value)
        if as_float.is_integer():
            return int(as_float)
    raise _fail(col, value)


def _int_converter(col: ColumnMetadata) -> Converter:
    lo, hi = INT_RANGES[col.type]

    def convert(value: Any) -> int:
        out = _integral(col, value)
        if not lo <= out <= hi:
            raise _fail(col, value, f"out of range [{lo}, {hi}]")
        return out

    return convert


def _float_converter(col: ColumnMetadata) -> Converter:
    single = col.type is MinorType.FLOAT4
    pack = struct.Struct("<f")

    def convert(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise _fail(col, value)
        out = float(value)
        exact = math.isnan(out) or math.isinf(out) or out == value
        if isinstance(value, decimal.Decimal) and not math.isnan(out):
            exact = decimal.Decimal(out) == value
        if not exact:
            raise _fail(col, value, "not exactly representable")
        if single and not math.isnan(out):
            try:
                narrowed = pack.unpack(pack.pack(out))[0]
            except OverflowError:
                raise _fail(col, value, "out of FLOAT4 range") from None
            if narrowed != out:
                raise _fail(col, value, "not exactly representable as FLOAT4")
        return out

    return convert


def _bool_converter(col: ColumnMetadata) -> Converter:
    def convert(value: Any) -> int:
        if isinstance(value, bool):
            return 1 if value else 0
        if isinstance(value, numbers.Integral) and int(value) in (0, 1):
            return int(value)
        raise _fail(col, value)

    return convert


def _string_converter(col: ColumnMetadata) -> Converter:
    def convert(value: Any) -> bytes:
        if isinstance(value, str):
            try:
                return value.encode()
            except UnicodeEncodeError as exc:
                raise _fail(col, value, "not encodable as UTF-8") from exc
        if isinstance(value, bytes | bytearray | memoryview):
            raw = bytes(value)
            try:
                raw.decode()
            except UnicodeDecodeError as exc:
                raise _fail(col, value, "not valid UTF-8") from exc
            return raw
        raise _fail(col, value)

    return convert


def _binary_converter(col: ColumnMetadata) -> Converter:
    def convert(value: Any) -> bytes:
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
        if isinstance(value, str):
            return value.encode()
        raise _fail(col, value)

    return convert


def _date_converter(col: ColumnMetadata) -> Converter:
    def convert(value: Any) -> int:
        if isinstance(value, dt.datetime):
            if value.time() != dt.time(0) or value.tzinfo is not None:
                raise _fail(col, value, "has a time of day")
            return (value.date() - _EPOCH_DATE).days
        if isinstance(value, dt.date):
            return (value - _EPOCH_DATE).days
        raise _fail(col, value)

    return convert


def _time_converter(col: ColumnMetadata) -> Converter:
    def convert(value: Any) -> int:
        if isinstance(value, dt.time):
            if value.microsecond % 1000:
                raise _fail(col, value, "TIME keeps milliseconds only")
            return (
                (value.hour * 60 + value.minute) * 60 + value.second
            ) * 1000 + value.microsecond // 1000
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            if 0 <= int(value) < _MS_PER_DAY:
                return int(value)
            raise _fail(col, value, "milliseconds of day out of range")
        raise _fail(col, value)

    return convert


def _timestamp_converter(col: ColumnMetadata) -> Converter:
    def convert(value: Any) -> int:
        if isinstance(value, dt.datetime):
            if getattr(value, "nanosecond", 0):
                raise _fail(col, value, "TIMESTAMP keeps microseconds only")
            delta = value - (_EPOCH_UTC if value.tzinfo is not None else _EPOCH)
            return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        if isinstance(value, dt.date):
            return (value - _EPOCH_DATE).days * 86_400_000_000
        raise _fail(col, value)

    return convert


def _decimal_converter(col: ColumnMetadata) -> Converter:
    precision = col.precision or 38
    scale = col.scale
    width = decimal_width(col)
    limit = 10**precision
    context = decimal.Context(prec=max(precision, 28) + 10)

    def convert(value: Any) -> bytes:
        if isinstance(value, bool):
            raise _fail(col, value)
        if isinstance(value, decimal.Decimal):
            number = value
        elif isinstance(value, numbers.Integral):
            number = decimal.Decimal(int(value))
        elif isinstance(value, float):
            number = decimal.Decimal(value)
        elif isinstance(value, str):
            try:
                number = decimal.Decimal(value.strip())
            except decimal.InvalidOperation as exc:
                raise _fail(col, value, "not a number") from exc
        else:
            raise _fail(col, value)
        if not number.is_finite():
            raise _fail(col, value, "not finite")
        scaled = number.scaleb(scale, context)
        unscaled = int(scaled)
        if scaled != unscaled:
            raise _fail(col, value, f"more than {scale} digits after the point")
        if not -limit < unscaled < limit:
            raise _fail(col, value, f"more than {precision} digits")
        return unscaled.to_bytes(width, "little", signed=True)

    return convert


_INTERVAL = struct.Struct("<iiq")


def _interval_converter(col: ColumnMetadata) -> Converter:
    def convert(value: Any) -> bytes:
        if isinstance(value, dt.timedelta):
            nanos = (value.seconds * 1_000_000 + value.microseconds) * 1000
            return _INTERVAL.pack(0, value.days, nanos)
        parts = (value.months, value.days, value.nanoseconds) if hasattr(value, "months") else value
        if isinstance(parts, tuple) and len(parts) == 3:
            try:
                return _INTERVAL.pack(*(int(p) for p in parts))
            except (struct.error, TypeError, ValueError) as exc:
                raise _fail(col, value, "months, days, nanoseconds out of range") from exc
        raise _fail(col, value)

    return convert


def _unsupported(col: ColumnMetadata) -> Converter:
    def convert(value: Any) -> Any:
        raise _fail(col, value, f"{col.type.value} values are not written through scalars")

    return convert


_BUILDERS: dict[MinorType, Callable[[ColumnMetadata], Converter]] = {
    MinorType.TINYINT: _int_converter,
    MinorType.SMALLINT: _int_converter,
    MinorType.INT: _int_converter,
    MinorType.BIGINT: _int_converter,
    MinorType.LATE: _int_converter,
    MinorType.NULL: _int_converter,
    MinorType.FLOAT4: _float_converter,
    MinorType.FLOAT8: _float_converter,
    MinorType.BIT: _bool_converter,
    MinorType.VARCHAR: _string_converter,
    MinorType.UNION: _string_converter,
    MinorType.VARBINARY: _binary_converter,
    MinorType.DATE: _date_converter,
    MinorType.TIME: _time_converter,
    MinorType.TIMESTAMP: _timestamp_converter,
    MinorType.VARDECIMAL: _decimal_converter,
    MinorType.INTERVAL: _interval_converter,
    MinorType.INTERVALDAY: _interval_converter,
    MinorType.INTERVALYEAR: _interval_converter,
}


def converter_for(col: ColumnMetadata) -> Converter:
    """The lossless converter for one scalar column; a missing rule says so."""
    build = _BUILDERS.get(col.type)
    if build is None:
        raise TypeError(f"no scalar conversion rule for Drill type {col.type.value}")
    return build(col)
