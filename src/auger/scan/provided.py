"""Provided schemas over text files: Drill's conversion rules, as Spark expressions.

Text files hold strings. With a provided schema (``.drill.schema`` or a table function's
``schema => 'inline=(...)'``), Drill converts each typed column: values are trimmed, a blank
becomes NULL (or the column's ``drill.blank-as`` value), a NOT NULL column takes its
``drill.default`` (or the type's natural default: 0, ``1970-01-01``...) when blank or absent,
dates and timestamps are read with their ``drill.format`` pattern, and a value that does not
convert is an error naming the column, its type and the value. The scan delivers these columns
as text; the expressions built here convert them in the same Spark plan.
"""

from __future__ import annotations

from collections.abc import Mapping

from auger.storage.schema_file import SchemaFile
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = [
    "absent_sensitive",
    "conversion_expressions",
    "needs_conversion",
    "required_varchar",
    "text_scan_column",
]

#: The value a NOT NULL column without a default takes when blank or absent.
_NATURAL_DEFAULTS: Mapping[MinorType, str] = {
    MinorType.TINYINT: "0",
    MinorType.SMALLINT: "0",
    MinorType.INT: "0",
    MinorType.BIGINT: "0",
    MinorType.FLOAT4: "0",
    MinorType.FLOAT8: "0",
    MinorType.VARDECIMAL: "0",
    MinorType.BIT: "false",
    MinorType.DATE: "1970-01-01",
    MinorType.TIMESTAMP: "1970-01-01 00:00:00",
    MinorType.TIME: "00:00:00",
}


def needs_conversion(col: ColumnMetadata) -> bool:
    """Typed scalar columns other than VARCHAR (those the text reader cannot type itself)."""
    return (
        col.type in _NATURAL_DEFAULTS
        and col.mode is not DataMode.REPEATED
        and col.type is not MinorType.TIME
    )


def absent_sensitive(col: ColumnMetadata) -> bool:
    """VARCHAR columns for which a value absent from the file (a short row, a file without
    the column) is not a blank one: NULL when nullable, the default when NOT NULL with one.
    Drill's writers fill what no field wrote that way; a blank field stays ""."""
    return (
        col.type is MinorType.VARCHAR
        and col.mode is not DataMode.REPEATED
        and (col.mode is DataMode.OPTIONAL or col.default_value is not None)
    )


def required_varchar(col: ColumnMetadata) -> bool:
    """A NOT NULL VARCHAR of a provided schema: the query fills what the scan leaves NULL."""
    return col.type is MinorType.VARCHAR and col.mode is DataMode.REQUIRED


def text_scan_column(col: ColumnMetadata) -> ColumnMetadata:
    """The column as the text scan delivers it: nullable text."""
    return ColumnMetadata(col.name, MinorType.VARCHAR, DataMode.OPTIONAL)


def _q(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


#: Text Drill reads as true in a BOOLEAN column (any case); any other text is false, never an
#: error (TestCsvWithSchema: ``on`` is true, ``foo`` false)
_TRUE_TEXT = ("true", "t", "1", "y", "yes", "on")


def _convert(col: ColumnMetadata, value: str, spark_type: str) -> str:
    fmt = col.format
    if col.type is MinorType.BIT:
        return f"(LOWER({value}) IN ({', '.join(_q(t) for t in _TRUE_TEXT)}))"
    if fmt and col.type is MinorType.DATE:
        return f"TRY_TO_DATE({value}, {_q(fmt)})"
    if fmt and col.type is MinorType.TIMESTAMP:
        return f"CAST(TRY_TO_TIMESTAMP({value}, {_q(fmt)}) AS TIMESTAMP_NTZ)"
    if col.type is MinorType.TIMESTAMP:
        return f"TRY_CAST({value} AS TIMESTAMP_NTZ)"
    return f"TRY_CAST({value} AS {spark_type})"


def _illegal_conversion(col: ColumnMetadata, value: str) -> str:
    """A Spark expression failing the query with Drill's DATA_READ error for this value.

    The message travels in the form :mod:`auger.spark.errors` decodes back into a UserError
    (a marker and the base64 of its JSON), built in SQL because it holds the offending value.
    """
    type_name = col.type.value
    safe = col.name.replace("'", "")
    message = (
        f"CONCAT('Illegal conversion: Column `{safe}` of type {type_name}, "
        f"Illegal value `', {value}, '`')"
    )
    payload = (
        f"TO_JSON(NAMED_STRUCT('k', 'DATA_READ', 'm', {message}, 'c', ARRAY('Column: {safe}')))"
    )
    return (
        f"RAISE_ERROR(CONCAT('AUGER-USER-ERROR[', "
        f"REPLACE(REPLACE(BASE64(CAST({payload} AS BINARY)), CHAR(13), ''), CHAR(10), ''), "
        f"'] DATA_READ ERROR: ', {message}))"
    )


def _column_expression(col: ColumnMetadata, spark_type: str) -> str:
    name = _ident(col.name)
    value = f"TRIM({name})"
    converted = _convert(col, value, spark_type)
    blank_as = col.prop("drill.blank-as")
    if col.mode is DataMode.REQUIRED:
        default = col.default_value
        fallback = default if default is not None else _NATURAL_DEFAULTS[col.type]
        blank_value = _convert(col, _q(fallback), spark_type)
    elif blank_as is not None and blank_as.lower() not in ("null", "skip"):
        blank_value = _convert(col, _q(blank_as), spark_type)
    else:
        blank_value = f"CAST(NULL AS {spark_type})"
    error = _illegal_conversion(col, value)
    return (
        f"CASE WHEN {name} IS NULL OR {value} = '' THEN {blank_value} "
        f"WHEN {converted} IS NULL THEN CAST({error} AS {spark_type}) "
        f"ELSE {converted} END AS {name}"
    )


def conversion_expressions(out: TupleSchema, provided: SchemaFile) -> list[str] | None:
    """Select expressions that type the scan's text columns, or None when none needs it."""
    from auger.types.spark import column_to_spark

    exprs: list[str] = []
    converted = False
    for col in out:
        given = provided.schema.column(col.name)
        if given is not None and needs_conversion(given):
            exprs.append(_column_expression(given, column_to_spark(given).simpleString()))
            converted = True
        elif given is not None and required_varchar(given):
            # scanned nullable: what no field wrote (a column no file has too) takes the
            # default, else ""
            name = _ident(col.name)
            default = given.default_value if given.default_value is not None else ""
            exprs.append(f"COALESCE({name}, {_q(str(default))}) AS {name}")
            converted = True
        else:
            exprs.append(_ident(col.name))
    return exprs if converted else None
