"""Drill's plan-time rules for text tables that the scan cannot apply by itself.

* A column the query names but no text file has is ``VARCHAR NOT NULL`` holding ``""``: Drill
  text readers fill blanks, never nulls, so ``WHERE missing = 'x'`` compares strings and finds
  nothing. :func:`null_type` is that type, handed to the one missing-column rule
  (:func:`auger.scan.missing.resolve_missing_types`).
* ``columns[n]`` only exists for files read without headers or schema; on any other text table
  it is Drill's VALIDATION error, raised before Spark would try to index a string.
* ``columns.x`` treats the array as a map: Drill's VALIDATION error too.
* A provided schema's ``drill.text.*`` properties (``skipFirstLine``, ``fieldDelimiter``...)
  override the format's options for that table, as Drill's ``TextFormatPlugin`` does.
* A non-empty provided schema over a file read without headers names its fields by position:
  the table is the schema's columns, with no ``columns`` array beside them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from auger.config import FormatConfig
from auger.formats.registry import get_format
from auger.formats.text.plugin import COLUMNS_WITH_HEADER, text_validation_error
from auger.formats.text.text_options import TextOptions
from auger.storage.schema_file import SchemaFile
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = [
    "TEXT_NULL_TYPE",
    "check_text_projection",
    "null_type",
    "positional_schema",
    "with_table_properties",
]

_PROPERTY_PREFIX = "drill.text."


def with_table_properties(fmt: FormatConfig, provided: SchemaFile | None) -> FormatConfig:
    """``fmt`` with the ``drill.text.*`` properties of a provided schema among its options
    (the reader gives them precedence and applies Drill's blank-value rules)."""
    if fmt.type != "text" or provided is None:
        return fmt
    props = {k: v for k, v in provided.properties.items() if k.startswith(_PROPERTY_PREFIX)}
    return replace(fmt, options={**fmt.options, **props}) if props else fmt


def positional_schema(
    fmt: FormatConfig, provided: SchemaFile | None, options: Mapping[str, object]
) -> TupleSchema | None:
    """The table schema of a headerless text table whose provided schema names its fields by
    position (Drill's ``ConstrainedFieldOutput``); None where the usual merge applies (no
    schema, an empty one, which Drill treats as none, or a file with headers)."""

    if fmt.type != "text" or provided is None or not len(provided.schema):
        return None
    if TextOptions.from_config(fmt, options).extract_header:
        return None
    return TupleSchema(provided.schema)


#: The type of a projected column no text file has: required VARCHAR, blank in every row.
TEXT_NULL_TYPE = ColumnMetadata(
    "null", MinorType.VARCHAR, DataMode.REQUIRED, properties={"drill.default": ""}
)


def null_type(fmt: FormatConfig) -> ColumnMetadata | None:
    """The type a planned scan of ``fmt`` gives columns no file has: text's, else the format
    plugin's own (None: Drill's nullable INT)."""
    return TEXT_NULL_TYPE if fmt.type == "text" else get_format(fmt.type).null_type


def check_text_projection(
    fmt: FormatConfig, schema: TupleSchema, paths: Mapping[str, str], options: Mapping[str, object]
) -> None:
    """Raise Drill's errors for ``columns[n]`` / ``columns.x`` where the table cannot have them."""

    used = [lower for lower in paths if lower.startswith(("columns[", "columns."))]
    if not used:
        return
    col = schema.column("columns")
    is_array = col is not None and col.type is MinorType.VARCHAR and col.mode is DataMode.REPEATED
    for lower in used:
        if lower.startswith("columns[") and not is_array:
            message = COLUMNS_WITH_HEADER
        elif lower.startswith("columns.") and is_array:
            message = "Column `columns` has map elements, but must be an array"
        else:
            continue
        raise text_validation_error(message, fmt.name, TextOptions.from_config(fmt, options))
