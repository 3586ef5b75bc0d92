"""Provided schemas over text files: Drill's conversion rules, applied to the scan's Arrow.

Text files hold strings. With a provided schema (``.drill.schema`` or a table function's
``schema => 'inline=(...)'``), the planned scan carries the provided types and converts each
typed column as it reads: values are trimmed, a blank becomes NULL (or the column's
``drill.blank-as`` value), a NOT NULL column takes its ``drill.default`` (or the type's natural
default: 0, ``1970-01-01``...) when blank or absent, dates and timestamps are read with their
``drill.format`` pattern, and a value that does not convert is a DATA_READ error naming the
file, the column, its type and the value. A NOT NULL VARCHAR takes its default (else ``""``)
where no field wrote it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from auger.scan.conflicts import ErrorContext, illegal_conversion
from auger.types import ColumnMetadata, DataMode, MinorType
from auger.types.arrow_values import null_scalar, text_array, text_scalar
from auger.types.java_format import strptime_pattern

__all__ = [
    "absent_sensitive",
    "needs_conversion",
    "required_varchar",
    "text_converter",
    "text_scan_column",
]

#: The value a NOT NULL column without a default takes when blank or absent.
_NATURAL_DEFAULTS: dict[MinorType, str] = {
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

#: Text Drill reads as true in a BOOLEAN column (any case); any other text is false, never an
#: error (``on`` is true, ``foo`` false). An Arrow array of them is made from their bytes for a
#: BOOLEAN column (:mod:`auger.types.arrow_values`: no pandas in a worker).
_TRUE_TEXT = ("true", "t", "1", "y", "yes", "on")

#: The empty string, made from its bytes: a Python value handed to a compute function would
#: make pyarrow import pandas in a worker (see :mod:`auger.types.arrow_values`).
_EMPTY = text_scalar("", pa.string())


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
    """A NOT NULL VARCHAR of a provided schema: the scan fills what no field wrote."""
    return col.type is MinorType.VARCHAR and col.mode is DataMode.REQUIRED


def text_scan_column(col: ColumnMetadata) -> ColumnMetadata:
    """The column as the text reader reads it: nullable text."""
    return ColumnMetadata(col.name, MinorType.VARCHAR, DataMode.OPTIONAL)


#: Turns one batch's text array of a column into its typed array; the context names the file.
TextConverter = Callable[[pa.Array, ErrorContext], pa.Array]


def text_converter(col: ColumnMetadata, dst: pa.DataType) -> TextConverter | None:
    """How the scan turns the text of ``col`` (a provided schema's column) into ``dst``, the
    column's Arrow type; None when the text is delivered as read."""
    if required_varchar(col):
        fill = text_scalar(col.default_value if col.default_value is not None else "", dst)
        return lambda arr, ctx: pc.fill_null(arr, fill).cast(dst)
    if not needs_conversion(col):
        return None
    parse = _parser(col, dst)
    blank_as = col.prop("drill.blank-as")
    if col.mode is DataMode.REQUIRED:
        default = col.default_value
        blank_text: str | None = default if default is not None else _NATURAL_DEFAULTS[col.type]
    elif blank_as is not None and blank_as.lower() not in ("null", "skip"):
        blank_text = blank_as
    else:
        blank_text = None
    blank = pa.nulls(1, dst) if blank_text is None else None

    def convert(arr: pa.Array, ctx: ErrorContext) -> pa.Array:
        nonlocal blank
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        value = pc.utf8_trim_whitespace(arr.cast(pa.string()))
        # NULL or empty (never NULL itself: NULL OR x is true when x is NULL too)
        blanks = pc.or_kleene(pc.is_null(value), pc.equal(value, _EMPTY))
        if blank is None:
            blank = parse(text_array([blank_text.strip()]), ctx)  # type: ignore[union-attr]
        if not pc.any(blanks).as_py():
            return parse(value, ctx)
        if pc.all(blanks).as_py():
            return pa.repeat(blank[0], len(value)).cast(dst)
        parsed = parse(pc.if_else(blanks, null_scalar(pa.string()), value), ctx)
        return pc.if_else(blanks, blank[0], parsed)

    return convert


def _parser(col: ColumnMetadata, dst: pa.DataType) -> TextConverter:
    """Trimmed, non-blank text (nulls pass) → ``dst``, or Drill's illegal-conversion error."""
    if col.type is MinorType.BIT:
        true_text = text_array(_TRUE_TEXT)
        return lambda arr, ctx: pc.is_in(pc.utf8_lower(arr), value_set=true_text).cast(dst)
    fmt = col.format
    if fmt and col.type in (MinorType.DATE, MinorType.TIMESTAMP):
        pattern = strptime_pattern(fmt)
        as_date = col.type is MinorType.DATE

        def temporal(arr: pa.Array, ctx: ErrorContext) -> pa.Array:
            encoded = arr.dictionary_encode()
            out: list[object] = []
            for text in encoded.dictionary.to_pylist():
                try:
                    parsed = dt.datetime.strptime(text, pattern)
                except ValueError:
                    raise illegal_conversion(col, text, ctx) from None
                out.append(parsed.date() if as_date else parsed)
            values = pa.array(out, dst)
            return values.take(encoded.indices)

        return temporal

    def cast(arr: pa.Array, ctx: ErrorContext) -> pa.Array:
        try:
            return arr.cast(dst, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        for text in arr.to_pylist():  # the error path only: find the value named
            if text is None:
                continue
            try:
                pa.array([text]).cast(dst, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise illegal_conversion(col, text, ctx) from None
        raise illegal_conversion(col, "", ctx)  # pragma: no cover - cast failed as a whole

    return cast
