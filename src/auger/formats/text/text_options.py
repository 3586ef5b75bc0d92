"""Drill's text format options, resolved once per scan from the format config.

Accepts the snake_case names of auger's TOML (``extract_header``), Drill's camelCase JSON names
(``extractHeader``, ``fieldDelimiter``) and, winning over both, the table properties of a
provided schema (``drill.text.extractHeader`` ...), which the planner may pass in the same dict.
Only the first character of each delimiter option counts, as in Drill.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from auger.config import FormatConfig
from auger.errors import UserError

__all__ = ["MAX_FIELDS", "TextOptions"]

#: Drill's limit on the number of fields of one row (``MAXIMUM_NUMBER_COLUMNS``).
MAX_FIELDS = 64 * 1024
#: Default limit on one field's size in bytes: Drill's per-vector limit (16 MiB).
DEFAULT_MAX_FIELD_BYTES = 16 * 1024 * 1024

_NUL = "\u0000"

# option -> accepted spellings, the last one (the table property) wins
_NAMES: dict[str, tuple[str, ...]] = {
    "delimiter": ("delimiter", "field_delimiter", "fieldDelimiter", "drill.text.fieldDelimiter"),
    "quote": ("quote", "drill.text.quote"),
    "escape": ("escape", "drill.text.escape"),
    "comment": ("comment", "drill.text.comment"),
    "line_delimiter": ("line_delimiter", "lineDelimiter", "drill.text.lineDelimiter"),
    "extract_header": ("extract_header", "extractHeader", "drill.text.extractHeader"),
    "skip_first_line": ("skip_first_line", "skipFirstLine", "drill.text.skipFirstLine"),
    "trim": ("trim", "drill.text.trim"),
    "parse_quotes": ("parse_quotes", "parseQuotes", "drill.text.parseQuotes"),
}


def _bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "on")
    return bool(value)


def _char(name: str, value: Any, blank: str) -> str:
    """First character of an option; blank values mean ``blank``; Drill's 0..127 check."""
    text = str(value) if value is not None else ""
    if text == "":
        return blank
    ch = text[0]
    if ord(ch) > 127:
        raise UserError.validation(
            f"Failure validating configuration option {name}.  Expected a character between 0 "
            f"and 127 but value was actually {ord(ch)}."
        )
    return ch


@dataclass(frozen=True)
class TextOptions:
    """The resolved options of one text scan. ``quote``/``comment`` are "" when disabled."""

    delimiter: str = ","
    quote: str = '"'
    escape: str = '"'
    comment: str = "#"
    line_delimiter: str = "\n"
    extract_header: bool = False
    skip_first_line: bool = False
    trim: bool = False
    max_field_bytes: int = DEFAULT_MAX_FIELD_BYTES

    @classmethod
    def from_config(
        cls, config: FormatConfig, options: Mapping[str, Any] | None = None
    ) -> TextOptions:
        raw: dict[str, Any] = {}
        for key, names in _NAMES.items():
            for name in names:
                if name in config.options:
                    # blank table properties keep the config value (Drill's rule), except comment
                    value = config.options[name]
                    if name.startswith("drill.") and value in ("", None) and key != "comment":
                        continue
                    raw[key] = value
        delimiter = _char("fieldDelimiter", raw.get("delimiter", ","), ",")
        quote = _char("quote", raw.get("quote", '"'), '"')
        if quote == _NUL or not _bool(raw.get("parse_quotes", True)):
            quote = ""
        escape = _char("escape", raw.get("escape", '"'), '"')
        comment = _char("comment", raw.get("comment", "#"), _NUL)
        if comment == _NUL:
            comment = ""
        line = str(raw.get("line_delimiter", "\n") or "\n")
        extract = _bool(raw.get("extract_header", False))
        skip = _bool(raw.get("skip_first_line", False)) and not extract
        limit = int((options or {}).get("auger.scan.text_max_field_bytes", DEFAULT_MAX_FIELD_BYTES))
        return cls(
            delimiter=delimiter,
            quote=quote,
            escape=escape,
            comment=comment,
            line_delimiter=line,
            extract_header=extract,
            skip_first_line=skip,
            trim=_bool(raw.get("trim", False)),
            max_field_bytes=limit,
        )

    @property
    def standard_lines(self) -> bool:
        """True when lines end the usual way (``\\n``, ``\\r\\n`` or ``\\r``)."""
        return self.line_delimiter in ("\n", "\r\n", "\r")

    def error_context(self) -> list[str]:
        return [
            f"Extract headers: {str(self.extract_header).lower()}",
            f"Skip first line: {str(self.skip_first_line).lower()}",
        ]
