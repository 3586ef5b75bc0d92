"""Drill's plan-time rules for text tables that the scan cannot apply by itself.

* A column the query names but no text file has is ``VARCHAR NOT NULL`` holding ``""``: Drill
  text readers fill blanks, never nulls (``TextFormatPlugin.configureScan``), so
  ``WHERE missing = 'x'`` compares strings and finds nothing.
* ``columns[n]`` only exists for files read without headers or schema; on any other text table
  it is Drill's VALIDATION error, raised before Spark would try to index a string.
* ``columns.x`` treats the array as a map: Drill's VALIDATION error too.
"""

from __future__ import annotations

from collections.abc import Mapping

from auger.config import FormatConfig
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["check_text_projection", "text_missing_column"]


def text_missing_column(name: str) -> ColumnMetadata:
    """A projected column no text file has: required VARCHAR, blank in every row."""
    return ColumnMetadata(
        name, MinorType.VARCHAR, DataMode.REQUIRED, properties={"drill.default": ""}
    )


def check_text_projection(
    fmt: FormatConfig, schema: TupleSchema, paths: Mapping[str, str], options: Mapping[str, object]
) -> None:
    """Raise Drill's errors for ``columns[n]`` / ``columns.x`` where the table cannot have them."""
    from auger.formats.text.options import TextOptions
    from auger.formats.text.plugin import COLUMNS_WITH_HEADER, text_validation_error

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
