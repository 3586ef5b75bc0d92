"""Drill's table functions: per-query format options and schemas on a file table.

``table(dfs.`data.csv`(type => 'text', fieldDelimiter => '|', extractHeader => true))`` reads one
table with format options the workspace does not have, and ``schema => 'inline=(...)'`` gives it
a provided schema for this query only. Drill's camelCase option names map to the snake_case keys
of auger's format configs (``fieldDelimiter`` → ``delimiter``, ``extractHeader`` →
``extract_header``).

A string option's Java escapes are read as Drill reads them (``'\\t'`` is a tab, ``'\\\\d'``
is ``\\d``), so a regex written for Drill's table function means the same here; a backslash
before any other character is kept (``'\\d'`` stays ``\\d``, where Drill would drop it).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from sqlglot import exp

from auger.config import FormatConfig, snake_case
from auger.errors import UserError
from auger.formats.lakehouse import table_kind
from auger.sql.catalog.resolution import FileTable
from auger.storage.schema_file import SchemaFile
from auger.types.schema_text import parse_schema

__all__ = ["TableFunction", "apply_table_function", "is_table_function", "table_function"]

#: Drill option names whose auger key is not simply their snake_case form.
_OPTION_KEYS = {
    "fielddelimiter": "delimiter",
    "delimiter": "delimiter",
}


class TableFunction:
    """A parsed ``table(<name>(opt => value, ...))`` reference."""

    def __init__(self, parts: list[str], options: dict[str, Any]) -> None:
        self.parts = parts
        self.options = options


def is_table_function(node: exp.Table) -> bool:
    return isinstance(node.this, exp.Anonymous) and node.this.name.lower() == "table"


#: the Java escapes Drill undoes in a table function's string options
#: (not ``\\b``, a backspace to Drill but a word boundary to a regex, nor ``\\f``)
_JAVA_ESCAPE = re.compile(r"\\(u+[0-9a-fA-F]{4}|[\\'\"tnr])")
_JAVA_CHARS = {"\\": "\\", "'": "'", '"': '"', "t": "\t", "n": "\n", "r": "\r"}


def _unescape_java(text: str) -> str:
    """``text`` with its Java escapes undone; other backslashes kept."""

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        return chr(int(code.lstrip("u"), 16)) if code[0] == "u" else _JAVA_CHARS[code]

    return _JAVA_ESCAPE.sub(one, text)


def _literal(value: exp.Expression) -> Any:
    if isinstance(value, exp.Boolean):
        return bool(value.this)
    if isinstance(value, exp.Literal):
        if value.is_string:
            return _unescape_java(value.name)
        text = value.name
        return float(text) if "." in text else int(text)
    if isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal):
        return -_literal(value.this)
    raise UserError.validation(f"Table function options take literals, not [{value.sql()}]")


def table_function(node: exp.Table) -> TableFunction:
    """Parse the table name and options of a table function reference."""
    args = node.this.expressions
    if len(args) != 1:
        raise UserError.validation("table(...) takes one table with its options")
    inner = args[0]
    prefix: list[str] = []
    if isinstance(inner, exp.Dot):  # Dot(Dot(dfs, tmp), name(options))
        prefix = _dot_parts(inner.this)
        inner = inner.expression
    if not isinstance(inner, exp.Anonymous):
        raise UserError.validation("table(...) needs a table name followed by (options)")
    name = inner.this.name if isinstance(inner.this, exp.Identifier) else str(inner.this)
    options: dict[str, Any] = {}
    for kw in inner.expressions:
        if not isinstance(kw, exp.Kwarg):
            raise UserError.validation("Table function options are written name => value")
        options[kw.this.name] = _literal(kw.expression)
    return TableFunction([*prefix, name], options)


def _dot_parts(node: exp.Expression) -> list[str]:
    if isinstance(node, exp.Dot):
        return [*_dot_parts(node.this), node.expression.name]
    return [node.name]


def _snake(name: str) -> str:
    key = _OPTION_KEYS.get(name.lower())
    if key is not None:
        return key
    return snake_case(name)


def _inline_schema(text: str) -> SchemaFile:
    """``inline=(col1 date ...) [properties {...}]`` → a provided schema."""
    body = text.strip()
    if not body.lower().startswith("inline="):
        raise UserError.validation(
            f"Unsupported table function schema [{text}]: only inline=(...) is supported"
        )
    body = body[len("inline=") :].strip()
    props: dict[str, str] = {}
    m = re.search(r"\)\s*properties\s*\{(.*)\}\s*$", body, re.IGNORECASE | re.DOTALL)
    if m:
        for key, value in re.findall(r"[`']([^`']+)[`']\s*=\s*[`']([^`']*)[`']", m.group(1)):
            props[key] = value
        body = body[: m.start() + 1]
    # Drill writes property values in backticks inside the quoted schema string
    body = re.sub(r"`([^`]*)`\s*=\s*`([^`]*)`", r"'\1' = '\2'", body)
    return SchemaFile(parse_schema(body), props)


def apply_table_function(ref: FileTable, fn: TableFunction) -> FileTable:
    """The file table with the function's format and schema in place of the workspace's."""
    options = dict(fn.options)
    schema_text = options.pop("schema", None)
    ftype = options.pop("type", None)
    fmt = None
    if ftype is not None or options:
        base = ref.workspace.format_for(ref.path)
        # options alone on a lakehouse table's directory (``snapshotId => ...``) are its own
        ftype = str(ftype or (base.type if base else table_kind(ref.path) or "text")).lower()
        merged: dict[str, Any] = dict(base.options) if base and base.type == ftype else {}
        merged.update({_snake(k): v for k, v in options.items()})
        fmt = FormatConfig(f"{ftype}(table function)", ftype, (), merged)
    schema = _inline_schema(str(schema_text)) if schema_text is not None else None
    return replace(ref, format_override=fmt, schema_override=schema)
