"""Columns and map members a query names but the data lacks, typed as Drill types them.

Drill answers ``t.m.zz`` with NULL, never an error; Spark resolves ``m.zz`` against the struct
type of ``m`` at analysis time and fails when the member is not there. So when a scan is
planned, every member path the query uses of a map column (``m.zz``, ``m.b.c``) is checked
against the table's schema, and each member no file has is added to the scan's map type as
Drill types a missing column: a nullable INT (or, when the query goes deeper, a map of such
members). The scan then delivers it as nulls, like a member that only some files have. A column
no file has at all, used with members (``t.nope.x``), becomes such a map too.

JSON columns seen only as null have no type yet: the query's use of them decides
(:func:`type_untyped_columns`).
"""

from __future__ import annotations

from collections.abc import Mapping

from auger.projection import RequestedColumn, RequestedTuple
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = [
    "member_paths",
    "missing_column",
    "type_untyped_columns",
    "with_missing_members",
]


def member_paths(paths: Mapping[str, str], root: str) -> list[list[str]]:
    """The member names (as spelled) of each dotted path below column ``root`` (lower-case).

    ``paths`` maps lower-cased paths to their spelling (``columns[2]``, ``m.a``, ``m.b[1].c``);
    an index ends the map part of a path.
    """
    out: list[list[str]] = []
    for lower, spelled in paths.items():
        head = lower.split("[", 1)[0]
        parts = head.split(".")
        if parts[0] != root or len(parts) < 2:
            continue
        out.append(spelled.split("[", 1)[0].split(".")[1:])
    return out


def with_missing_members(col: ColumnMetadata, paths: list[list[str]]) -> ColumnMetadata:
    """``col`` with every member the paths name but the map lacks added (nullable INT)."""
    if col.type is not MinorType.MAP or col.mode is DataMode.REPEATED or not paths:
        return col
    children = list(col.children or ())
    index = {c.name.lower(): i for i, c in enumerate(children)}
    deeper: dict[str, list[list[str]]] = {}
    spelling: dict[str, str] = {}
    for parts in paths:
        key = parts[0].lower()
        spelling.setdefault(key, parts[0])
        rest = deeper.setdefault(key, [])
        if len(parts) > 1:
            rest.append(parts[1:])
    changed = False
    for key, rest in deeper.items():
        if key in index:
            child = children[index[key]]
            grown = with_missing_members(child, rest)
            if grown is not child:
                children[index[key]] = grown
                changed = True
        else:
            children.append(missing_column(spelling[key], rest))
            changed = True
    if not changed:
        return col
    return ColumnMetadata(
        col.name, col.type, col.mode, children, col.precision, col.scale, col.properties
    )


def missing_column(name: str, paths: list[list[str]]) -> ColumnMetadata:
    """A column no file has: Drill's nullable INT, or a map of the members the query uses."""
    if not paths:
        return ColumnMetadata(name, MinorType.INT, DataMode.OPTIONAL)
    return with_missing_members(ColumnMetadata(name, MinorType.MAP, DataMode.REQUIRED, []), paths)


def _as_requested(name: str, proj: RequestedColumn) -> ColumnMetadata:
    """The column type a projection implies for a column of no known type: a map of its
    members (``a.b``), an array (``a[0]``, of maps for ``a[0].b``), else Drill's nullable INT."""
    if proj.is_array:
        if proj.members is not None:
            kids = [_as_requested(m.name, m) for m in proj.members]
            elem = ColumnMetadata(name, MinorType.MAP, DataMode.REPEATED, kids)
        else:
            elem = ColumnMetadata(name, MinorType.INT, DataMode.REPEATED)
        for _ in range(proj.array_dims - 1):
            elem = ColumnMetadata(name, MinorType.LIST, DataMode.REPEATED, (elem,))
        return elem
    if proj.members is not None:
        kids = [_as_requested(m.name, m) for m in proj.members]
        return ColumnMetadata(name, MinorType.MAP, DataMode.REQUIRED, kids)
    return ColumnMetadata(name, MinorType.INT, DataMode.OPTIONAL)


def _is_untyped(col: ColumnMetadata) -> bool:
    return col.type is MinorType.INT and col.mode is DataMode.OPTIONAL and not col.children


def type_untyped_columns(
    schema: TupleSchema, wanted: RequestedTuple, keep: frozenset[str] = frozenset()
) -> TupleSchema:
    """``schema`` with each JSON column seen only as null typed as the query uses it.

    JSON gives a column that was null in every (sampled) record Drill's nullable INT: its
    type is not known yet. Drill's reader then lets the query's projection decide, so
    ``t.a.b`` and ``t.a[0]`` on such a column are NULL rather than a type error. The same
    holds for such a member inside a map (``t.m.a.b``). ``keep`` names top-level columns
    whose INT is declared (a provided schema) and so is a real type.
    """

    def retype(col: ColumnMetadata, proj: RequestedColumn | None) -> ColumnMetadata:
        if proj is None or proj.is_simple:
            return col
        if _is_untyped(col):
            return _as_requested(col.name, proj)
        if col.type is MinorType.MAP and col.mode is not DataMode.REPEATED and proj.is_map:
            assert proj.members is not None
            kids = [retype(c, proj.members.get(c.name)) for c in col.children or ()]
            if any(a is not b for a, b in zip(kids, col.children or (), strict=True)):
                return col.with_children(kids)
        return col

    out = TupleSchema()
    for col in schema:
        out.add(col if col.name.lower() in keep else retype(col, wanted.get(col.name)))
    return out
