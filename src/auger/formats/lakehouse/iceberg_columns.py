"""How the data files of an Iceberg table name its columns: by field id, under the names the
columns had when each file was written.

Iceberg tracks columns by id, so a rename changes the table's metadata only: files written
before it still hold the old name, and a name given up may be a new column's now. While no
column or struct member ever changed its name the files' names are the table's and no mapping
is needed; after a rename the scan matches each file's columns and struct members (in nested
structs, lists and maps too) to the table's by the ids in the file
(:class:`auger.formats.parquet_columns.ColumnMapping`). A file written without ids (taken in
as it was) is read by the table's name mapping, which keeps every name each field had.
"""

from __future__ import annotations

from typing import Any

from auger.errors import UserError
from auger.formats.lakehouse.snapshot import first_line
from auger.formats.parquet_columns import ELEMENT, KEY, VALUE

__all__ = ["column_mapping", "name_ids"]


def _paths_by_id(fields: Any, prefix: str = "") -> dict[int, str]:
    """Every field of a schema, nested members included, by id: its dotted path."""
    out: dict[int, str] = {}
    for f in fields:
        path = prefix + f.name
        out[int(f.field_id)] = path
        t = f.field_type
        if t.is_struct:
            out.update(_paths_by_id(t.fields, path + "."))
        else:  # a list's element, a map's key and value
            subs = [getattr(t, a, None) for a in ("element_field", "key_field", "value_field")]
            out.update(_paths_by_id([f for f in subs if f is not None], path + "."))
    return out


def column_mapping(
    table: Any, schema: Any, location: str
) -> tuple[tuple[int | None, str, str], ...]:
    """How the data files name the columns of ``schema``: empty while every column has kept
    its name and no name went to another column; else each column by its field id (files
    written before a rename hold the old name), struct members by their dotted paths, those in
    lists and maps too.

    Raises:
        UserError: UNSUPPORTED_OPERATION for a member renamed and then dropped (its old name
            may be a new member's now, which only the dropped member's id tells apart).
    """
    history = [_paths_by_id(s.fields) for s in table.schemas().values()]
    ids_of: dict[str, set[int]] = {}
    names_of: dict[int, set[str]] = {}
    for paths in history:
        for field_id, path in paths.items():
            ids_of.setdefault(path.lower(), set()).add(field_id)
            names_of.setdefault(field_id, set()).add(path.lower())
    top = {int(f.field_id) for s in table.schemas().values() for f in s.fields}
    members = _struct_members(schema.fields)
    for field_id, names in names_of.items():
        if len(names) > 1 and field_id not in top and field_id not in members:
            old, new = sorted(names)[:2]
            raise UserError.unsupported(
                f"Iceberg table [{location}] renamed struct member [{old}] to [{new}], which "
                "auger does not read yet",
                ["Fix: read a copy written after the rename (CREATE TABLE AS)"],
            )
    moved = any(len(n) > 1 for n in names_of.values()) or any(len(i) > 1 for i in ids_of.values())
    if not moved:
        return ()
    columns = [(int(f.field_id), f.name, f.name) for f in schema.fields]
    return tuple(columns + [(i, path, path) for i, path in members.items()])


def _struct_members(fields: Any, prefix: str = "") -> dict[int, str]:
    """The struct members under the columns (in nested structs, and in structs inside lists
    and maps), by id: their dotted paths (``s.a``, ``l.element.a``, ``m.value.a``)."""
    out: dict[int, str] = {}
    for f in fields:
        out.update(_members_of(f.field_type, prefix + f.name))
    return out


def _members_of(t: Any, path: str) -> dict[int, str]:
    """The struct members inside a type whose column or member is at ``path``, by id."""
    out: dict[int, str] = {}
    if t.is_struct:
        for member in t.fields:
            sub = f"{path}.{member.name}"
            out[int(member.field_id)] = sub
            out.update(_members_of(member.field_type, sub))
        return out
    for step, attr in ((ELEMENT, "element_field"), (KEY, "key_field"), (VALUE, "value_field")):
        child = getattr(t, attr, None)
        if child is not None:
            out.update(_members_of(child.field_type, f"{path}.{step}"))
    return out


def name_ids(table: Any, location: str) -> dict[str, int]:
    """The table's name mapping (``schema.name-mapping.default``, which a table that took in
    files written without field ids keeps): every name a field had, as a lower-cased dotted
    path (a list's element ``l.element``, a map's ``m.key`` and ``m.value``), with its id.

    Raises:
        UserError: VALIDATION for a name mapping that cannot be read.
    """
    try:
        mapping = table.metadata.name_mapping()
    except Exception as exc:
        raise UserError.validation(
            f"Iceberg table [{location}] has a name mapping that cannot be read",
            ["Property: schema.name-mapping.default", f"Reason: {first_line(exc)}"],
        ) from None
    out: dict[str, int] = {}

    def walk(fields: Any, prefixes: list[str]) -> None:
        for f in fields:
            paths = [prefix + name for prefix in prefixes for name in f.names]
            for path in paths:
                out[path.lower()] = int(f.field_id)
            if f.fields:
                walk(f.fields, [path + "." for path in paths])

    if mapping is not None:
        walk(mapping, [""])
    return out
