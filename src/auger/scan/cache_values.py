"""The values of a raw-file cache part's string columns that hold few of them.

A query grouped by a column of few values (``GROUP BY category``) makes few groups, and the
planner runs a string ``MIN`` or ``MAX`` over few groups without Spark's sort
(:mod:`auger.sql.planning.few_groups`). Nothing in a Parquet footer says how many values a
column holds, so each part of an entry lists, in its footer metadata (:data:`VALUES_KEY`), the
distinct values of each string column that has at most :data:`FEW_VALUES` of them (NULL aside),
each short. The union over a query's parts is then how many values the column has in its files.

Pure pyarrow, no Spark: the build tasks that write parts import it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["FEW_VALUES", "VALUES_KEY", "FewValues", "few_values"]

#: A part's footer metadata key listing its columns of few values
VALUES_KEY = "auger.values"
#: The most distinct values a column may have to be listed
FEW_VALUES = 128
#: The longest value (in characters) a listed column may hold: the footer stays small
_LONGEST = 64


class FewValues:
    """The distinct values of one part's string columns as it is written, a row group at a
    time; a column past :data:`FEW_VALUES` values (or with a longer value) is dropped."""

    def __init__(self, schema: pa.Schema) -> None:
        """``schema``: the part's own columns; its string columns are watched."""
        self._seen: dict[str, set[str]] = {
            f.name: set()
            for f in schema
            if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
        }

    def add(self, group: pa.Table) -> None:
        """Count in a row group's values."""
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
        if not self._seen:
            return {}
        listed = {name: sorted(values) for name, values in self._seen.items()}
        return {VALUES_KEY: json.dumps(listed, sort_keys=True)}


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
