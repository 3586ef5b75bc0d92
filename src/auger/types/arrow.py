"""Drill types ↔ Arrow types, as declarative tables (a lookup per mapping, not an ``if`` chain).

Arrow is auger's in-memory format: every reader batch and every result is a ``pyarrow`` batch.
A REPEATED column is an Arrow list of its element type; a MAP is a struct; a DICT is an Arrow map.
"""

from __future__ import annotations

import pyarrow as pa

from auger.types.metadata import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = [
    "arrow_to_column",
    "column_to_arrow",
    "field_to_arrow",
    "schema_from_arrow",
    "schema_to_arrow",
]

# Scalar Drill type -> Arrow type (DECIMAL, maps and lists are built by hand below).
_TO_ARROW: dict[MinorType, pa.DataType] = {
    MinorType.TINYINT: pa.int8(),
    MinorType.SMALLINT: pa.int16(),
    MinorType.INT: pa.int32(),
    MinorType.BIGINT: pa.int64(),
    MinorType.FLOAT4: pa.float32(),
    MinorType.FLOAT8: pa.float64(),
    MinorType.BIT: pa.bool_(),
    MinorType.VARCHAR: pa.string(),
    MinorType.VARBINARY: pa.binary(),
    MinorType.DATE: pa.date32(),
    MinorType.TIME: pa.time32("ms"),
    MinorType.TIMESTAMP: pa.timestamp("us"),
    MinorType.INTERVAL: pa.month_day_nano_interval(),
    MinorType.INTERVALDAY: pa.month_day_nano_interval(),
    MinorType.INTERVALYEAR: pa.month_day_nano_interval(),
    MinorType.NULL: pa.null(),
    # A column whose type is not known yet reads as nullable INT, Drill's default for nulls.
    MinorType.LATE: pa.int32(),
}


def _value_type(col: ColumnMetadata) -> pa.DataType:
    """Arrow type of one value of the column, ignoring its mode."""
    t = col.type
    if t is MinorType.VARDECIMAL:
        precision = col.precision or 38
        if precision > 38:
            return pa.decimal256(precision, col.scale)
        return pa.decimal128(precision, col.scale)
    if t is MinorType.MAP:
        return pa.struct([field_to_arrow(c) for c in col.children or ()])
    if t is MinorType.DICT:
        kids = col.children or ()
        key = _value_type(kids[0]) if kids else pa.string()
        value = column_to_arrow(kids[1]) if len(kids) > 1 else pa.string()
        return pa.map_(key, value)
    if t is MinorType.LIST:
        kids = col.children or ()
        return column_to_arrow(kids[0]) if kids else pa.list_(pa.string())
    if t is MinorType.UNION:
        return pa.string()
    try:
        return _TO_ARROW[t]
    except KeyError:
        raise TypeError(f"no Arrow rule for Drill type {t.value}") from None


def column_to_arrow(col: ColumnMetadata) -> pa.DataType:
    """Arrow type of the column's values, with REPEATED as a list."""
    value = _value_type(col)
    if col.type is MinorType.LIST:
        return pa.list_(value)
    if col.mode is DataMode.REPEATED:
        return pa.list_(pa.field("element", value, nullable=col.type is MinorType.MAP))
    return value


def field_to_arrow(col: ColumnMetadata) -> pa.Field:
    """An Arrow field; REQUIRED columns are non-nullable, arrays are non-null (empty if absent)."""
    nullable = col.mode is DataMode.OPTIONAL
    return pa.field(col.name, column_to_arrow(col), nullable=nullable)


def schema_to_arrow(schema: TupleSchema) -> pa.Schema:
    return pa.schema([field_to_arrow(c) for c in schema])


# Arrow type id -> Drill type, for schemas that come from Arrow-native files (Parquet).
def _scalar_from_arrow(t: pa.DataType) -> MinorType:
    checks: list[tuple[object, MinorType]] = [
        (pa.types.is_int8, MinorType.TINYINT),
        (pa.types.is_int16, MinorType.SMALLINT),
        (pa.types.is_int32, MinorType.INT),
        (pa.types.is_int64, MinorType.BIGINT),
        # Drill reads Parquet's unsigned integers as its signed ones of the stored width
        # (UINT_8/16/32 in an INT32, UINT_64 in an INT64): the Parquet reader wraps the values.
        (pa.types.is_uint8, MinorType.INT),
        (pa.types.is_uint16, MinorType.INT),
        (pa.types.is_uint32, MinorType.INT),
        (pa.types.is_uint64, MinorType.BIGINT),
        (pa.types.is_float16, MinorType.FLOAT4),
        (pa.types.is_float32, MinorType.FLOAT4),
        (pa.types.is_float64, MinorType.FLOAT8),
        (pa.types.is_boolean, MinorType.BIT),
        (pa.types.is_string, MinorType.VARCHAR),
        (pa.types.is_large_string, MinorType.VARCHAR),
        (pa.types.is_string_view, MinorType.VARCHAR),
        (pa.types.is_binary, MinorType.VARBINARY),
        (pa.types.is_large_binary, MinorType.VARBINARY),
        (pa.types.is_fixed_size_binary, MinorType.VARBINARY),
        (pa.types.is_date, MinorType.DATE),
        (pa.types.is_time, MinorType.TIME),
        (pa.types.is_timestamp, MinorType.TIMESTAMP),
        (pa.types.is_decimal, MinorType.VARDECIMAL),
        (pa.types.is_interval, MinorType.INTERVAL),
        (pa.types.is_duration, MinorType.INTERVALDAY),
        (pa.types.is_null, MinorType.NULL),
        (pa.types.is_dictionary, MinorType.VARCHAR),
    ]
    for check, minor in checks:
        if check(t):  # type: ignore[operator]
            return minor
    raise TypeError(f"no Drill rule for Arrow type {t}")


def arrow_to_column(name: str, t: pa.DataType, nullable: bool = True) -> ColumnMetadata:
    """The Drill column for an Arrow field (lists become REPEATED, lists of lists LIST)."""
    mode = DataMode.OPTIONAL if nullable else DataMode.REQUIRED
    if pa.types.is_struct(t):
        members = [arrow_to_column(f.name, f.type, f.nullable) for f in t]
        return ColumnMetadata(name, MinorType.MAP, mode if nullable else DataMode.REQUIRED, members)
    if pa.types.is_map(t):
        key = arrow_to_column("key", t.key_type, False)
        value = arrow_to_column("value", t.item_type, t.item_field.nullable)
        return ColumnMetadata(name, MinorType.DICT, mode, (key, value))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        elem = arrow_to_column(name, t.value_type, True)
        if elem.mode is DataMode.REPEATED:
            return ColumnMetadata(name, MinorType.LIST, DataMode.REPEATED, (elem,))
        return elem.with_mode(DataMode.REPEATED)
    if pa.types.is_dictionary(t):
        return arrow_to_column(name, t.value_type, nullable)
    minor = _scalar_from_arrow(t)
    if minor is MinorType.VARDECIMAL:
        return ColumnMetadata(name, minor, mode, None, t.precision, t.scale)
    return ColumnMetadata(name, minor, mode)


def schema_from_arrow(schema: pa.Schema) -> TupleSchema:
    return TupleSchema(arrow_to_column(f.name, f.type, f.nullable) for f in schema)
