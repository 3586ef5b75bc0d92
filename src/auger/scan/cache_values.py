"""The values of a raw-file cache part's columns that hold few of them.

A query grouped by a column of few values (``GROUP BY category``) makes few groups, and the
planner runs a string ``MIN`` or ``MAX`` over few groups without Spark's sort
(:mod:`auger.sql.planning.few_groups`). Nothing in a Parquet footer says how many values a
column holds, so each part of an entry lists, in its footer metadata:

- :data:`VALUES_KEY`: the distinct values of each string column that has at most
  :data:`FEW_VALUES` of them (NULL aside), each short. The union over a query's parts is then
  how many values the column has in its files.
- :data:`RANGES_KEY`: the range of each integer column, or integer member of a map (a JSON
  object's number, ``m.qty``), whose values span at most :data:`FEW_VALUES` integers. The
  smallest and largest over a query's parts bound how many values it has. (Parquet's own
  statistics say as much per row group, but Spark keeps them to itself, and planning reads
  only the footers' metadata.)

Pure pyarrow, no Spark: the build tasks that write parts import it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["FEW_VALUES", "RANGES_KEY", "VALUES_KEY", "FewValues", "few_ranges", "few_values"]

#: A part's footer metadata key listing its columns of few values
VALUES_KEY = "auger.values"
#: A part's footer metadata key giving the ranges of its integer columns and members of few
#: values: ``[[path, low, high], ...]`` (``path``: the column's name, then its members' names)
RANGES_KEY = "auger.ranges"
#: The most distinct values a column may have to be listed
FEW_VALUES = 128
#: The longest value (in characters) a listed column may hold: the footer stays small
_LONGEST = 64


#: A path of names: a column, then its members
Path = tuple[str, ...]


class FewValues:
    """The distinct values of one part's string columns, and the range of its integer columns
    and members, as it is written, a row group at a time; a column past :data:`FEW_VALUES`
    values (or with a longer value, or a wider range) is dropped."""

    def __init__(self, schema: pa.Schema) -> None:
        """``schema``: the part's own columns; its string columns, and its integer columns and
        members, are watched."""
        self._seen: dict[str, set[str]] = {
            f.name: set()
            for f in schema
            if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
        }
        #: integer leaf -> its smallest and largest value so far (None: only NULLs yet)
        self._ranges: dict[Path, tuple[int, int] | None] = {}
        #: integer leaf -> the positions of its column and members
        self._where: dict[Path, tuple[int, ...]] = {}
        for i, f in enumerate(schema):
            for path, where in _integer_leaves(f, (), (i,)):
                self._ranges[path] = None
                self._where[path] = where

    def add(self, group: pa.Table) -> None:
        """Count in a row group's values."""
        self._add_strings(group)
        for path in list(self._ranges):
            where = self._where[path]
            column: Any = group.column(where[0]).combine_chunks()
            if len(where) > 1:
                column = pc.struct_field(column, list(where[1:]))
            bounds = pc.min_max(column)
            low, high = bounds["min"].as_py(), bounds["max"].as_py()
            if low is None:
                continue  # NULLs alone
            known = self._ranges[path]
            if known is not None:
                low, high = min(low, known[0]), max(high, known[1])
            if high - low >= FEW_VALUES:
                del self._ranges[path]
            else:
                self._ranges[path] = (low, high)

    def _add_strings(self, group: pa.Table) -> None:
        for name in list(self._seen):
            column = group.column(name)
            if column.null_count == len(column):
                continue  # a headerless file's positions past its fields
            distinct = pc.unique(column.combine_chunks()).drop_null()
            if len(distinct) > FEW_VALUES or (
                len(distinct) and pc.max(pc.utf8_length(distinct)).as_py() > _LONGEST
            ):
                del self._seen[name]
                continue
            seen = self._seen[name]
            seen.update(distinct.to_pylist())
            if len(seen) > FEW_VALUES:
                del self._seen[name]

    def metadata(self) -> dict[str, str]:
        """The footer metadata listing the columns of few values (empty: none)."""
        out: dict[str, str] = {}
        if self._seen:
            listed = {name: sorted(values) for name, values in self._seen.items()}
            out[VALUES_KEY] = json.dumps(listed, sort_keys=True)
        ranges = [[list(path), *bounds] for path, bounds in self._ranges.items() if bounds]
        if ranges:
            out[RANGES_KEY] = json.dumps(ranges)
        return out


def _integer_leaves(
    field: pa.Field, above: Path, where: tuple[int, ...]
) -> list[tuple[Path, tuple[int, ...]]]:
    """The paths of ``field``'s integers, itself or its members' (maps in maps), each with
    its positions (``where``: ``field``'s own)."""
    path = (*above, field.name)
    if pa.types.is_integer(field.type):
        return [(path, where)]
    if pa.types.is_struct(field.type):
        return [
            leaf
            for i, member in enumerate(field.type)
            for leaf in _integer_leaves(member, path, (*where, i))
        ]
    return []


def few_values(key_values: Mapping[str, str]) -> dict[str, frozenset[str]]:
    """A part's columns of few values, with their values, from its footer metadata (none if
    unreadable)."""
    raw = key_values.get(VALUES_KEY)
    if not raw:
        return {}
    try:
        listed = json.loads(raw)
        return {
            str(name): frozenset(str(v) for v in values)
            for name, values in listed.items()
            if isinstance(values, list)
        }
    except (ValueError, TypeError, AttributeError):
        return {}


def few_ranges(key_values: Mapping[str, str]) -> dict[Path, tuple[int, int]]:
    """A part's integer columns and members of few values (by path), with their smallest and
    largest values, from its footer metadata (none if unreadable)."""
    raw = key_values.get(RANGES_KEY)
    if not raw:
        return {}
    try:
        return {
            tuple(str(name) for name in path): (int(low), int(high))
            for path, low, high in json.loads(raw)
            if isinstance(path, list) and path
        }
    except (ValueError, TypeError):
        return {}
