"""Drill types → Spark SQL types, and the Arrow schema Spark expects for them.

Spark's Python data source checks the first Arrow batch strictly against
``to_arrow_schema(spark_schema)`` (types, order, nullability), so batches are conformed to
:func:`spark_arrow_schema` before they leave a reader. Every Spark field is nullable: Drill's
REQUIRED is a promise about the data, not something Spark needs to know.

Drill types Spark cannot represent travel as strings: TIME as ``HH:mm:ss.SSS`` and intervals as
ISO-8601 durations.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from auger.types.metadata import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["column_to_spark", "schema_to_spark", "spark_arrow_schema", "spark_to_column"]


def _scalar_rules() -> dict[MinorType, Any]:
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    return {
        MinorType.TINYINT: T.ByteType(),
        MinorType.SMALLINT: T.ShortType(),
        MinorType.INT: T.IntegerType(),
        MinorType.BIGINT: T.LongType(),
        MinorType.FLOAT4: T.FloatType(),
        MinorType.FLOAT8: T.DoubleType(),
        MinorType.BIT: T.BooleanType(),
        MinorType.VARCHAR: T.StringType(),
        MinorType.VARBINARY: T.BinaryType(),
        MinorType.DATE: T.DateType(),
        MinorType.TIME: T.StringType(),
        # Drill timestamps carry no zone: Spark's TIMESTAMP_NTZ has the same meaning.
        MinorType.TIMESTAMP: T.TimestampNTZType(),
        MinorType.INTERVAL: T.StringType(),
        MinorType.INTERVALDAY: T.StringType(),
        MinorType.INTERVALYEAR: T.StringType(),
        MinorType.NULL: T.IntegerType(),
        MinorType.LATE: T.IntegerType(),
        MinorType.UNION: T.StringType(),
    }


def _value_to_spark(col: ColumnMetadata) -> Any:
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    t = col.type
    if t is MinorType.VARDECIMAL:
        return T.DecimalType(min(col.precision or 38, 38), col.scale)
    if t is MinorType.MAP:
        return T.StructType(
            [T.StructField(c.name, column_to_spark(c), True) for c in col.children or ()]
        )
    if t is MinorType.DICT:
        kids = col.children or ()
        key = _value_to_spark(kids[0]) if kids else T.StringType()
        value = column_to_spark(kids[1]) if len(kids) > 1 else T.StringType()
        return T.MapType(key, value, True)
    if t is MinorType.LIST:
        kids = col.children or ()
        return column_to_spark(kids[0]) if kids else T.ArrayType(T.StringType(), True)
    rules = _scalar_rules()
    if t not in rules:
        raise TypeError(f"no Spark rule for Drill type {t.value}")
    return rules[t]


def column_to_spark(col: ColumnMetadata) -> Any:
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    value = _value_to_spark(col)
    if col.type is MinorType.LIST or col.mode is DataMode.REPEATED:
        return T.ArrayType(value, True)
    return value


def schema_to_spark(schema: TupleSchema) -> Any:
    """Spark ``StructType`` for a tuple schema; all fields nullable."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    return T.StructType([T.StructField(c.name, column_to_spark(c), True) for c in schema])


def spark_arrow_schema(spark_schema: Any) -> pa.Schema:
    """The exact Arrow schema Spark validates Python data source batches against."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(spark_schema, timezone="UTC", prefers_large_types=False)
    except TypeError:  # older signatures
        return to_arrow_schema(spark_schema)


def spark_to_column(name: str, dtype: Any, nullable: bool = True) -> ColumnMetadata:
    """Drill column for a Spark type (used for results and temporary tables)."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    mode = DataMode.OPTIONAL if nullable else DataMode.REQUIRED
    if isinstance(dtype, T.StructType):
        return ColumnMetadata(
            name,
            MinorType.MAP,
            DataMode.REQUIRED,
            [spark_to_column(f.name, f.dataType, f.nullable) for f in dtype.fields],
        )
    if isinstance(dtype, T.ArrayType):
        elem = spark_to_column(name, dtype.elementType, True)
        if elem.mode is DataMode.REPEATED:
            return ColumnMetadata(name, MinorType.LIST, DataMode.REPEATED, (elem,))
        return elem.with_mode(DataMode.REPEATED)
    if isinstance(dtype, T.MapType):
        return ColumnMetadata(
            name,
            MinorType.DICT,
            mode,
            (
                spark_to_column("key", dtype.keyType, False),
                spark_to_column("value", dtype.valueType, dtype.valueContainsNull),
            ),
        )
    if isinstance(dtype, T.DecimalType):
        return ColumnMetadata(name, MinorType.VARDECIMAL, mode, None, dtype.precision, dtype.scale)
    table: list[tuple[type, MinorType]] = [
        (T.ByteType, MinorType.TINYINT),
        (T.ShortType, MinorType.SMALLINT),
        (T.IntegerType, MinorType.INT),
        (T.LongType, MinorType.BIGINT),
        (T.FloatType, MinorType.FLOAT4),
        (T.DoubleType, MinorType.FLOAT8),
        (T.BooleanType, MinorType.BIT),
        (T.StringType, MinorType.VARCHAR),
        (T.BinaryType, MinorType.VARBINARY),
        (T.DateType, MinorType.DATE),
        (T.TimestampNTZType, MinorType.TIMESTAMP),
        (T.TimestampType, MinorType.TIMESTAMP),
        (T.NullType, MinorType.INT),
        (T.DayTimeIntervalType, MinorType.INTERVALDAY),
        (T.YearMonthIntervalType, MinorType.INTERVALYEAR),
    ]
    for cls, minor in table:
        if isinstance(dtype, cls):
            return ColumnMetadata(name, minor, mode)
    return ColumnMetadata(name, MinorType.VARCHAR, mode)
