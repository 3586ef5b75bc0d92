"""Map members the data lacks: Drill answers ``t.m.zz`` with NULL, never an error.

Spark resolves ``m.zz`` against the struct type of ``m`` at analysis time and fails when the
member is not there. So before a scan is planned, every member path the query uses of a map
column (``m.zz``, ``m.b.c``) is checked against the table's schema, and each member no file has
is added to the scan's map type as Drill types a missing column: a nullable INT (or, when the
query goes deeper, a map of such members). The scan then delivers it as nulls, like a member
that only some files have. A column no file has at all, used with members (``t.nope.x``),
becomes such a map too.
"""

from __future__ import annotations

from collections.abc import Mapping

from auger.types import ColumnMetadata, DataMode, MinorType

__all__ = ["member_paths", "missing_column", "with_missing_members"]


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
