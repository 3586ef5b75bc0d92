"""Provided schemas: the ``.drill.schema`` file in a table's root directory.

``CREATE SCHEMA ... FOR TABLE t`` writes it; the planner reads it and hands its columns to the
scan as the table's schema (types the data is converted to; with ``drill.strict`` only these
columns). The JSON layout is Drill's, so files written by either system are read by both:
``table``, ``schema`` (``columns``, ``properties``) and ``version``; each column ``name``,
``type``, ``mode`` and ``properties`` (``drill.format`` and ``drill.default`` among them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from auger.errors import UserError
from auger.storage import drill_json
from auger.storage import filesystem as fs
from auger.storage.drill_json import write_atomically
from auger.types import ColumnMetadata, DataMode, TupleSchema, parse_type
from auger.types.metadata import column_type_text

__all__ = [
    "SCHEMA_FILE_NAME",
    "SchemaFile",
    "read_schema_file",
    "schema_file_path",
    "write_schema_file",
]

SCHEMA_FILE_NAME = ".drill.schema"


@dataclass(frozen=True)
class SchemaFile:
    """A provided schema: its columns, table-level properties and the table it belongs to."""

    schema: TupleSchema
    properties: Mapping[str, str] = field(default_factory=dict)
    table: str | None = None  # ``dfs.tmp.`t``` for FOR TABLE schemas; None for PATH schemas
    version: int = 1

    @property
    def strict(self) -> bool:
        return str(self.properties.get("drill.strict", "false")).lower() == "true"

    def to_json(self) -> str:
        out: dict[str, object] = {}
        if self.table is not None:
            out["table"] = self.table
        schema: dict[str, object] = {"columns": [_column_json(c) for c in self.schema]}
        if self.properties:
            schema["properties"] = dict(self.properties)
        out["schema"] = schema
        out["version"] = self.version
        return drill_json.dumps(out)

    @classmethod
    def from_json(cls, text: str, path: str = "") -> SchemaFile:
        try:
            raw = json.loads(text)
            body = raw.get("schema") or {}
            cols = TupleSchema(_column_from_json(c) for c in body.get("columns") or [])
            return cls(
                cols,
                {str(k): str(v) for k, v in (body.get("properties") or {}).items()},
                raw.get("table"),
                int(raw.get("version", 1)),
            )
        except (ValueError, KeyError, TypeError, UserError) as exc:
            raise UserError.validation(
                f"Unable to read the schema file [{path}]: {exc}", [f"File: {path}"]
            ) from exc

    def to_statement(self) -> str:
        """The ``CREATE OR REPLACE SCHEMA`` statement that recreates this schema (Drill's form)."""
        lines = ["CREATE OR REPLACE SCHEMA "]
        if len(self.schema):
            lines.append("(")
            cols = [f"`{c.name.replace('`', '``')}` {_statement_type(c)}" for c in self.schema]
            lines.extend(f"{c}, " for c in cols[:-1])
            lines.append(cols[-1])
            lines.append(") ")
        else:
            lines.append("() ")
        if self.table is not None:
            lines.append(f"FOR TABLE {self.table} ")
        if self.properties:
            lines.append("PROPERTIES (")
            props = [f"'{_q(k)}' = '{_q(v)}'" for k, v in self.properties.items()]
            lines.extend(f"{p}, " for p in props[:-1])
            lines.append(props[-1])
            lines.append(")")
        return "\n".join(lines) + "\n"


def _q(text: str) -> str:
    return text.replace("'", "''")


def _statement_type(col: ColumnMetadata) -> str:
    """Type, nullability, FORMAT, DEFAULT and ``PROPERTIES { ... }`` as Drill prints them."""
    bare = ColumnMetadata(col.name, col.type, col.mode, col.children, col.precision, col.scale)
    text = column_type_text(bare)
    props = dict(col.properties)
    for key, word in (("drill.format", "FORMAT"), ("drill.default", "DEFAULT")):
        if key in props:
            text += f" {word} '{_q(props.pop(key))}'"
    if props:
        body = ", ".join(f"'{_q(k)}' = '{_q(v)}'" for k, v in props.items())
        text += f" PROPERTIES {{ {body} }}"
    return text


def _type_text(col: ColumnMetadata) -> str:
    """The type without nullability or properties (those are ``mode`` and ``properties``)."""
    bare = ColumnMetadata(
        col.name,
        col.type,
        DataMode.OPTIONAL if col.mode is DataMode.REQUIRED else col.mode,
        col.children,
        col.precision,
        col.scale,
    )
    return column_type_text(bare)


def _column_json(col: ColumnMetadata) -> dict[str, object]:
    out: dict[str, object] = {"name": col.name, "type": _type_text(col), "mode": col.mode.value}
    if col.properties:
        out["properties"] = dict(col.properties)
    return out


def _column_from_json(raw: Mapping[str, object]) -> ColumnMetadata:
    name = str(raw["name"])
    col = parse_type(name, str(raw["type"]))
    mode = DataMode(str(raw.get("mode", "OPTIONAL")))
    if col.mode is not DataMode.REPEATED:
        col = col.with_mode(mode)
    props = raw.get("properties") or {}
    if isinstance(props, Mapping) and props:
        col = col.with_properties(**{str(k): str(v) for k, v in props.items()})
    return col


def schema_file_path(table_dir: str) -> str:
    return fs.join(table_dir, SCHEMA_FILE_NAME)


def read_schema_file(path: str) -> SchemaFile:
    return SchemaFile.from_json(fs.read_text(path), path)


def write_schema_file(path: str, schema: SchemaFile, mode: int = 0o664) -> None:
    """Write atomically (temp file + rename)."""
    write_atomically(path, schema.to_json(), mode)
