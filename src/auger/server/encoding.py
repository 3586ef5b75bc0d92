"""Drill's REST value encoding (1.19+): column type names and JSON tokens for Arrow columns.

What a client sees is decided here: numbers stay JSON numbers, DATE/TIME/TIMESTAMP become epoch
milliseconds (timestamps read as UTC wall-clock), DECIMAL is written as plain digits, binary as
padded base64, NaN and infinities as the strings Jackson writes, intervals as ISO-8601 periods,
maps as objects and repeated columns as arrays. Each column is encoded as a whole (one encoder
per Arrow type) so a batch costs one Python pass per column, not a type check per value.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from auger.types import ColumnMetadata, MinorType

__all__ = ["encode_batch_rows", "json_string", "type_name"]

_NULL = "null"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

#: Spark has no TINYINT/SMALLINT in Drill's SQL; Drill reports them as INT on the wire.
_WIRE_NAMES: dict[MinorType, str] = {
    MinorType.TINYINT: "INT",
    MinorType.SMALLINT: "INT",
    MinorType.NULL: "INT",
    MinorType.LATE: "INT",
}


def type_name(col: ColumnMetadata) -> str:
    """The ``metadata`` string of a column: the element type name, with precision for decimals."""
    if col.type is MinorType.LIST and col.children:
        return type_name(col.children[0])
    if col.type is MinorType.VARDECIMAL:
        return f"VARDECIMAL({col.precision or 38}, {col.scale or 0})"
    return _WIRE_NAMES.get(col.type, col.type.value)


def json_string(text: str) -> str:
    return _dumps(text)


# ------------------------------------------------------------------ scalar formatters
def _float(v: float) -> str:
    if math.isnan(v):
        return '"NaN"'
    if math.isinf(v):
        return '"Infinity"' if v > 0 else '"-Infinity"'
    return repr(v)


def _decimal(v: Any) -> str:
    text = str(v)
    return text if text not in ("NaN", "Infinity", "-Infinity") else f'"{text}"'


def _binary(v: bytes) -> str:
    return '"' + base64.b64encode(v).decode("ascii") + '"'


def _period_from_parts(months: int, days: int, nanos: int) -> str:
    """ISO-8601 period the way Joda's standard formatter prints Drill intervals."""
    out = "P"
    years, months = divmod(months, 12) if months >= 0 else (-((-months) // 12), -((-months) % 12))
    if years:
        out += f"{years}Y"
    if months:
        out += f"{months}M"
    if days:
        out += f"{days}D"
    if nanos:
        millis = nanos // 1_000_000
        sign = "-" if millis < 0 else ""
        secs, ms = divmod(abs(millis), 1000)
        out += f"T{sign}{secs}.{ms:03d}S" if ms else f"T{sign}{secs}S"
    return '"' + (out if out != "P" else "PT0S") + '"'


def _interval(v: Any) -> str:
    if isinstance(v, dt.timedelta):
        total_us = (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds
        days, rest_us = divmod(total_us, 86_400_000_000)
        return _period_from_parts(0, days, rest_us * 1000)
    months, days, nanos = (getattr(v, "months", 0), getattr(v, "days", 0), v.nanoseconds)
    return _period_from_parts(months, days, nanos)


def _value(v: Any) -> str:
    """Generic encoder for values inside nested types (by Python type)."""
    if v is None:
        return _NULL
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return _dumps(v)
    if isinstance(v, bytes | bytearray):
        return _binary(bytes(v))
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        return str((v - _EPOCH) // dt.timedelta(milliseconds=1))
    if isinstance(v, dt.date):
        return str((v - _EPOCH_DATE).days * 86_400_000)
    if isinstance(v, dt.time):
        return str(((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000)
    if isinstance(v, dt.timedelta) or hasattr(v, "nanoseconds"):
        return _interval(v)
    if isinstance(v, dict):
        return "{" + ",".join(_dumps(str(k)) + ":" + _value(x) for k, x in v.items()) + "}"
    if isinstance(v, list | tuple):
        return "[" + ",".join(_value(x) for x in v) + "]"
    if hasattr(v, "as_tuple"):  # Decimal
        return _decimal(v)
    return _dumps(str(v))


_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


# ------------------------------------------------------------------ column encoders
def _nested(t: pa.DataType) -> Callable[[Any], str]:
    """Encoder for one Python value of an Arrow type (maps arrive as lists of key/value pairs)."""
    if pa.types.is_map(t):
        item = _nested(t.item_type)

        def enc_map(v: Any) -> str:
            if v is None:
                return _NULL
            return "{" + ",".join(_dumps(str(k)) + ":" + item(x) for k, x in v) + "}"

        return enc_map
    if pa.types.is_struct(t):
        fields = [(t.field(i).name, _nested(t.field(i).type)) for i in range(t.num_fields)]
        keys = [_dumps(name) + ":" for name, _ in fields]

        def enc_struct(v: Any) -> str:
            if v is None:
                return _NULL
            return "{" + ",".join(k + e(v.get(name)) for k, (name, e) in zip(keys, fields)) + "}"

        return enc_struct
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        elem = _nested(t.value_type)

        def enc_list(v: Any) -> str:
            return _NULL if v is None else "[" + ",".join(elem(x) for x in v) + "]"

        return enc_list
    return _value


def _ints_to_tokens(values: list[Any], scale: int = 1, div: int = 1) -> list[str]:
    return [_NULL if v is None else str(v * scale // div) for v in values]


def encode_column(arr: pa.Array) -> list[str]:
    """JSON tokens, one per row, for an Arrow column."""
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if pa.types.is_null(t):
        return [_NULL] * len(arr)
    if pa.types.is_boolean(t):
        return [_NULL if v is None else ("true" if v else "false") for v in arr.to_pylist()]
    if pa.types.is_integer(t):
        return [_NULL if v is None else str(v) for v in arr.to_pylist()]
    if pa.types.is_floating(t):
        return [_NULL if v is None else _float(v) for v in arr.to_pylist()]
    if pa.types.is_decimal(t):
        return [_NULL if v is None else _decimal(v) for v in arr.to_pylist()]
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return [_NULL if v is None else _dumps(v) for v in arr.to_pylist()]
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return [_NULL if v is None else _binary(v) for v in arr.to_pylist()]
    if pa.types.is_date32(t):
        return _ints_to_tokens(arr.cast(pa.int32()).to_pylist(), 86_400_000)
    if pa.types.is_date64(t):
        return _ints_to_tokens(arr.cast(pa.int64()).to_pylist())
    if pa.types.is_timestamp(t):
        per_ms = {"s": 1, "ms": 1, "us": 1000, "ns": 1_000_000}[t.unit]
        scale = 1000 if t.unit == "s" else 1
        ints = pc.cast(arr, pa.int64()).to_pylist()
        return _ints_to_tokens(ints, scale, per_ms)
    if pa.types.is_time(t):
        per_ms = {"s": 1, "ms": 1, "us": 1000, "ns": 1_000_000}[t.unit]
        scale = 1000 if t.unit == "s" else 1
        width = pa.int32() if pa.types.is_time32(t) else pa.int64()
        return _ints_to_tokens(arr.cast(width).to_pylist(), scale, per_ms)
    if pa.types.is_duration(t) or pa.types.is_interval(t):
        return [_NULL if v is None else _interval(v) for v in arr.to_pylist()]
    enc = _nested(t)
    return [enc(v) for v in arr.to_pylist()]


def encode_batch_rows(batch: pa.RecordBatch | pa.Table, names: list[str]) -> list[str]:
    """Each row of the batch as a compact JSON object with every column key, in column order."""
    if batch.num_columns == 0:
        return ["{}"] * batch.num_rows
    keys = [_dumps(n) + ":" for n in names]
    columns = [encode_column(_as_array(batch.column(i))) for i in range(batch.num_columns)]
    return ["{" + ",".join(k + v for k, v in zip(keys, row)) + "}" for row in zip(*columns)]


def _as_array(col: Any) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col
