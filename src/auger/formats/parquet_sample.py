"""A few rows of a set of local Parquet files, near a column's largest or smallest values.

The planner bounds a query's ``MIN`` and ``MAX`` by values it has seen
(:mod:`auger.sql.planning.extreme_bounds`). Any row is a correct sample for that; a good one
holds values near the extremes. A row group's statistics say where those are: the row group
whose maximum of a column is the largest holds the column's largest value, and often others
near it (files are often written in the order of a key, an id or a time, and a row group holds
neighbours in that order). So the sample is, in each of a few files evenly spaced in the set,
the first rows of the row group of the largest maximum (for a ``MAX``) or the smallest minimum
(for a ``MIN``) of each column asked for; a file without statistics gives its last or its
first row group. It costs a footer and a batch per file and column, however large the files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = [
    "FOOTER_FILES",
    "SAMPLE_FILES",
    "SAMPLE_ROWS",
    "extreme_rows",
    "never_null_leaves",
]

#: The files a sample reads at most, evenly spaced in the set.
SAMPLE_FILES = 8

#: The rows a sample reads at most of each row group it picks.
SAMPLE_ROWS = 65_536


def extreme_rows(
    files: Sequence[str], columns: Sequence[str], extremes: Sequence[tuple[str, bool]]
) -> pa.Table | None:
    """``columns`` of the rows near each extreme of ``extremes`` ((column, True) for its
    largest values, False for its smallest) in up to :data:`SAMPLE_FILES` of ``files`` (see the
    module); None when a file lacks one of the columns or cannot be read (the sample is an
    optimisation: nothing is lost without it)."""
    if not files or not extremes:
        return None
    step = max(1.0, len(files) / SAMPLE_FILES)
    chosen = sorted({int(i * step) for i in range(min(len(files), SAMPLE_FILES))})
    tables = []
    try:
        for index in chosen:
            with pq.ParquetFile(files[index]) as parquet:
                names = parquet.schema_arrow.names
                if any(c not in names for c in columns):
                    return None
                meta = parquet.metadata
                leaves = _leaves(meta)
                picked = {_row_group(meta, leaves.get(c), up) for c, up in extremes}
                for group in sorted(g for g in picked if 0 <= g < meta.num_row_groups):
                    batches = parquet.iter_batches(SAMPLE_ROWS, row_groups=[group], columns=columns)
                    batch = next(batches, None)
                    if batch is not None:
                        tables.append(pa.Table.from_batches([batch]))
        if not tables:
            return None
        return pa.concat_tables(tables, promote_options="permissive")
    except (OSError, pa.ArrowException):
        return None


def _leaves(meta: Any) -> dict[str, int]:
    """A footer's leaf columns by their dotted paths (``m.qty``): their indexes in a row group."""
    return {meta.schema.column(i).path: i for i in range(meta.num_columns)}


def _row_group(metadata: Any, column: int | None, largest: bool) -> int:
    """The row group of the largest maximum (``largest``) or the smallest minimum of the
    file's ``column``-th leaf column by its statistics; the last or the first row group where a
    row group has none (or the column is not a leaf of its own)."""
    groups = metadata.num_row_groups
    best, where = None, groups - 1 if largest else 0
    if column is None:
        return where
    for group in range(groups):
        chunk = metadata.row_group(group).column(column)
        stats = chunk.statistics
        if stats is None or not stats.has_min_max:
            return groups - 1 if largest else 0
        value = stats.max if largest else stats.min
        if best is None or (value > best if largest else value < best):
            best, where = value, group
    return where


#: The most files whose footers :func:`never_null_leaves` reads.
FOOTER_FILES = 64


def never_null_leaves(files: Sequence[str], roots: Sequence[str]) -> set[tuple[str, ...]]:
    """The paths under ``roots`` (a root column, or a member of its structs at any depth, as
    the column's name then the members') that no row of ``files`` holds NULL at, by every row
    group's statistics (a leaf's null count counts the rows whose struct is NULL too); none
    when the files are more than :data:`FOOTER_FILES`. A path a footer cannot tell of (a row
    group without a null count, a name with a dot, which Parquet's dotted paths would confuse)
    is left out."""
    if not files or len(files) > FOOTER_FILES:
        return set()
    out: set[tuple[str, ...]] | None = None
    try:
        for path in files:
            with pq.ParquetFile(path) as parquet:
                meta = parquet.metadata
                arrow = parquet.schema_arrow
                leaves = _leaves(meta)
                found = set()
                for root in roots:
                    if root not in arrow.names or "." in root:
                        continue
                    for parts in _paths((root,), arrow.field(root).type):
                        leaf = leaves.get(".".join(parts))
                        if leaf is not None and all(
                            _no_nulls(meta.row_group(g).column(leaf).statistics)
                            for g in range(meta.num_row_groups)
                        ):
                            found.add(parts)
                out = found if out is None else out & found
                if not out:
                    break
    except (OSError, pa.ArrowException):
        return set()
    return out or set()


def _paths(parts: tuple[str, ...], t: pa.DataType) -> list[tuple[str, ...]]:
    """The path of a column of type ``t`` and those of its structs' members at any depth,
    but none through a member whose name has a dot."""
    out = [parts]
    if pa.types.is_struct(t):
        for i in range(t.num_fields):
            field = t.field(i)
            if "." not in field.name:
                out.extend(_paths((*parts, field.name), field.type))
    return out


def _no_nulls(stats: Any) -> bool:
    """Whether a column chunk's statistics say it holds no NULL."""
    return stats is not None and stats.has_null_count and stats.null_count == 0
