"""Which column of a Parquet file is which column of its table, when the names differ, and
the table's columns that no file holds.

A plain Parquet table matches file columns to table columns by name. Tables whose metadata
tracks columns by identity do not: an Iceberg table that renamed a column still has the old
name in the files written before the rename (the field id in each file says which column it
is), and a Delta table with column mapping writes every column under a physical name of its
own (``col-5f1c...``) beside the same kind of field id. The table's metadata gives the
mapping; the Parquet reader applies it to each file, so the scan above sees the table's names.

A Delta table keeps its partition columns' values in its log, one per file, not in the files
(nor, under column mapping, in the files' directory names): the reader adds them to each
file's rows as the table types them (:class:`PartitionConstants`).
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

__all__ = [
    "COLUMN_MAPPING",
    "ELEMENT",
    "FIELD_ID_KEYS",
    "KEY",
    "NAME_MAPPING",
    "PARTITION_VALUES",
    "VALUE",
    "ColumnMapping",
    "PartitionConstants",
    "column_mapping",
    "field_id",
    "file_paths",
    "partition_constants",
    "rename_members",
]

#: The format option that carries a table's mapping to the Parquet reader: a list of
#: ``[field id or None, name in the files, name in the table]``, one per top-level column, and
#: one per member of a struct column, whose names are dotted paths (``s.a`` in the files,
#: ``s.b`` in the table; ``l.element.a`` for a member of the structs in list ``l``, ``m.key.a``
#: and ``m.value.a`` in map ``m``).
COLUMN_MAPPING = "column_mapping"

#: The format option that carries an Iceberg table's name mapping beside its column mapping:
#: ``{dotted path, lower case: field id}``, every name a field had (see :class:`ColumnMapping`).
NAME_MAPPING = "name_mapping"

#: The format option that carries a table's partition columns to the Parquet reader:
#: ``{"schema": <the columns' Arrow schema, IPC, base64>, "files": {path: [value text...]}}``.
PARTITION_VALUES = "partition_values"

#: Where a file's Arrow schema keeps a column's field id: Parquet's field id, and the type
#: attribute Iceberg writes into ORC files (which pyarrow gives as the field's metadata).
FIELD_ID_KEYS = (b"PARQUET:field_id", b"iceberg.id")


def field_id(field: pa.Field) -> int | None:
    """The field id a file's column carries (see :data:`FIELD_ID_KEYS`), or None."""
    meta = field.metadata or {}
    raw = next((meta[k] for k in FIELD_ID_KEYS if k in meta), None)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


#: How a dotted member path steps into a list's element and a map's keys and values
#: (``l.element.a``: member ``a`` of the structs in list ``l``), whatever the file's schema
#: names those fields.
ELEMENT, KEY, VALUE = "element", "key", "value"


def _children(t: pa.DataType) -> list[tuple[str, pa.Field]]:
    """The fields a list (its element) or map (its key and value) type holds, each with the
    step a member path takes into it; none for other types."""
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [(ELEMENT, t.value_field)]
    if pa.types.is_map(t):
        return [(KEY, t.key_field), (VALUE, t.item_field)]
    return []


def _members(field: pa.Field, path: str, by_id: dict[int, str], by_name: dict[str, str]) -> None:
    """The struct members under a column (in nested structs, and in structs inside lists and
    maps): id -> dotted path in the file, and lower-cased dotted path -> dotted path."""
    t = field.type
    if not pa.types.is_struct(t):
        for step, child in _children(t):
            _members(child, f"{path}.{step}", by_id, by_name)
        return
    for member in t:
        sub = f"{path}.{member.name}"
        if (i := field_id(member)) is not None:
            by_id[i] = sub
        by_name[sub.lower()] = sub
        _members(member, sub, by_id, by_name)


def _rename_type(t: pa.DataType, path: str, names: Mapping[str, str]) -> pa.DataType:
    """A type with its struct members, at any depth, under their table names (``names``:
    dotted path in the file -> member name in the table)."""
    if pa.types.is_struct(t):
        fields = []
        for member in t:
            sub = f"{path}.{member.name}"
            fields.append(
                member.with_name(names.get(sub, member.name)).with_type(
                    _rename_type(member.type, sub, names)
                )
            )
        return pa.struct(fields)
    children = _children(t)
    if not children:
        return t
    kids = [f.with_type(_rename_type(f.type, f"{path}.{step}", names)) for step, f in children]
    if pa.types.is_map(t):
        return pa.map_(kids[0], kids[1], t.keys_sorted)
    if pa.types.is_fixed_size_list(t):
        return pa.list_(kids[0], t.list_size)
    return pa.large_list(kids[0]) if pa.types.is_large_list(t) else pa.list_(kids[0])


def rename_members(arr: pa.Array, path: str, names: Mapping[str, str]) -> pa.Array:
    """A column read from a file (``path``: its name in the file) with its struct members,
    inside lists and maps too, under the table's names (``names``:
    :meth:`ColumnMapping.member_names`): the same values, nulls kept, under the renamed type."""
    renamed = _rename_type(arr.type, path, names)
    return arr if renamed == arr.type else arr.view(renamed)


def _assign_ids(field: pa.Field, path: str, ids: Mapping[str, int]) -> pa.Field:
    """A field of a file written without field ids, and its members, with the ids a name
    mapping gives their paths (``ids``: lower-cased dotted path -> field id)."""
    t = field.type
    if pa.types.is_struct(t):
        t = pa.struct([_assign_ids(m, f"{path}.{m.name}", ids) for m in t])
    elif children := _children(t):
        kids = [_assign_ids(f, f"{path}.{step}", ids) for step, f in children]
        if pa.types.is_map(t):
            t = pa.map_(kids[0], kids[1], t.keys_sorted)
        elif pa.types.is_fixed_size_list(t):
            t = pa.list_(kids[0], t.list_size)
        else:
            t = pa.large_list(kids[0]) if pa.types.is_large_list(t) else pa.list_(kids[0])
    found = ids.get(path.lower())
    meta = dict(field.metadata or {})
    if found is not None:
        meta[FIELD_ID_KEYS[0]] = str(found).encode()
    return field.with_type(t).with_metadata(meta)


@dataclass(frozen=True)
class ColumnMapping:
    """The table's columns as (field id or None, name in the files, table name): top-level
    columns by name, struct members by dotted path.

    ``name_ids`` is Iceberg's name mapping: every name (dotted path, lower case) a field had,
    with the field's id. A file written without field ids (Parquet files an Iceberg table
    took in as they were) is read by the ids its names map to, so a column renamed since
    reads its values under its new name."""

    entries: tuple[tuple[int | None, str, str], ...]
    name_ids: Mapping[str, int] = dataclasses.field(default_factory=dict)

    def _with_ids(self, schema: pa.Schema) -> pa.Schema:
        """``schema``, or (a file without field ids, and a name mapping) the same with the
        ids its names map to."""
        if not self.name_ids or any(field_id(f) is not None for f in schema):
            return schema
        return pa.schema([_assign_ids(f, f.name, self.name_ids) for f in schema])

    def file_names(self, schema: pa.Schema) -> dict[str, str]:
        """The file's columns that are table columns: name in this file -> table name.

        A column is found by its field id where the table and the file both have ids (the
        name it had when the file was written may be another table column's name now), else
        by its name in the files. A file column matching no table column (one the table
        dropped) is left out.
        """
        schema = self._with_ids(schema)
        by_id = {i: f for f in schema if (i := field_id(f)) is not None}
        by_name = {f.name.lower(): f for f in schema}
        out: dict[str, str] = {}
        for wanted_id, physical, logical in self.entries:
            if "." in logical:
                continue
            if by_id and wanted_id is not None:
                field = by_id.get(wanted_id)
            else:
                field = by_name.get(physical.lower())
            if field is not None:
                out[field.name] = logical
        return out

    def member_names(self, schema: pa.Schema) -> dict[str, str]:
        """The file's struct members that are table members: dotted path in this file ->
        the member's name in the table (by field id where both have ids, else by path)."""
        by_id: dict[int, str] = {}
        by_name: dict[str, str] = {}
        for f in self._with_ids(schema):
            _members(f, f.name, by_id, by_name)
        out: dict[str, str] = {}
        for wanted_id, physical, logical in self.entries:
            if "." not in logical:
                continue
            if by_id and wanted_id is not None:
                path = by_id.get(wanted_id)
            else:
                path = by_name.get(physical.lower())
            if path is not None:
                out[path] = logical.rsplit(".", 1)[1]
        return out

    def table_view(self, schema: pa.Schema) -> tuple[pa.Schema, dict[str, str]]:
        """The file's schema under the table's names, and table name or member path (lower
        case) -> the name or dotted path to read in this file."""
        names = self.file_names(schema)
        members = self.member_names(schema)
        view = pa.schema(
            [
                f.with_name(names[f.name]).with_type(_rename_type(f.type, f.name, members))
                for f in schema
                if f.name in names
            ]
        )
        physical = {logical.lower(): name for name, logical in names.items()}
        for path in members:
            physical[_table_path(path, names, members).lower()] = path
        return view, physical

    def to_option(self) -> list[list[Any]]:
        return [list(e) for e in self.entries]


def _table_path(path: str, names: Mapping[str, str], members: Mapping[str, str]) -> str:
    """A dotted path in the file under the table's names."""
    parts = path.split(".")
    out = [names.get(parts[0], parts[0])]
    for i in range(1, len(parts)):
        out.append(members.get(".".join(parts[: i + 1]), parts[i]))
    return ".".join(out)


def column_mapping(format_options: Mapping[str, Any]) -> ColumnMapping | None:
    """The mapping a table's format options carry, or None (columns match by name)."""
    raw: Sequence[Sequence[Any]] | None = format_options.get(COLUMN_MAPPING)
    if not raw:
        return None
    names = format_options.get(NAME_MAPPING) or {}
    return ColumnMapping(
        tuple((None if e[0] is None else int(e[0]), str(e[1]), str(e[2])) for e in raw),
        {str(k): int(v) for k, v in names.items()},
    )


def file_paths(selected: Sequence[str], physical: Mapping[str, str]) -> list[str]:
    """Column paths under the table's names (``m.b``) as this file names them: the longest
    prefix the mapping knows (a renamed member), the rest as it is."""
    out = []
    for path in selected:
        parts = path.split(".")
        for i in range(len(parts), 0, -1):
            known = physical.get(".".join(parts[:i]).lower())
            if known is not None:
                out.append(".".join([known, *parts[i:]]))
                break
        else:
            out.append(path)
    return out


@dataclass(frozen=True)
class PartitionConstants:
    """The partition columns of a table (their Arrow types) and each file's values as the
    table's log gives them (text such as ``2024-01-31``, or Python values; None for null)."""

    schema: pa.Schema
    files: Mapping[str, Sequence[Any]]

    def to_option(self) -> dict[str, Any]:
        raw = base64.b64encode(self.schema.serialize().to_pybytes()).decode("ascii")
        return {"schema": raw, "files": {p: list(v) for p, v in self.files.items()}}

    def names(self) -> list[str]:
        return list(self.schema.names)

    def arrays(
        self, path: str, wanted: Sequence[str] | None, rows: int
    ) -> list[tuple[str, pa.Array]]:
        """The partition columns ``wanted`` (lower-cased names; None: all) of the file at
        ``path``, ``rows`` copies of its value each, typed as the table types them."""
        values = self.files[path]
        keep = None if wanted is None else set(wanted)
        out = []
        for field, text in zip(self.schema, values, strict=True):
            if keep is not None and field.name.lower() not in keep:
                continue
            out.append((field.name, _constant(text, field.type, rows)))
        return out


def _constant(value: Any, t: pa.DataType, rows: int) -> pa.Array:
    """``rows`` copies of a partition value (as the log gives it: text, or a Python value
    where the log reader typed it already), as type ``t``."""
    if value is None:
        return pa.nulls(rows, t)
    if isinstance(value, str) and (pa.types.is_binary(t) or pa.types.is_large_binary(t)):
        value = value.encode("utf-8")
    arr = pa.array([value])
    if pa.types.is_timestamp(t) and t.tz is not None and pa.types.is_string(arr.type):
        arr = arr.cast(pa.timestamp(t.unit))  # an instant written without its zone: UTC
    arr = arr.cast(t)
    return pa.repeat(arr[0], rows) if rows else pa.array([], t)


def partition_constants(format_options: Mapping[str, Any]) -> PartitionConstants | None:
    """The partition columns a table's format options carry, or None."""
    raw = format_options.get(PARTITION_VALUES)
    if not raw:
        return None
    schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(raw["schema"])))
    return PartitionConstants(schema, raw["files"])
